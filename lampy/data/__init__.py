"""Data plumbing for training loops: aligned mini-batches and a seeded split."""

from lampy.data._batches import Batches as Batches
from lampy.data._batches import train_test_split as train_test_split
