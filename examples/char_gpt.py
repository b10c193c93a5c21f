"""Train a character-level GPT on Python's own help texts, then sample from it.

The model has nanoGPT's shape (Karpathy, github.com/karpathy/nanoGPT): token and
position embeddings, pre-norm blocks of causal self-attention and a GELU MLP, a final
LayerNorm and an output layer tied to the token embedding. It trains with AdamW
(decoupled weight decay on the 2-d weights only), a linear warm-up then a cosine decay of
the learning rate, and gradient-norm clipping, and samples with a temperature and top-k.

The text is ``pydoc_data.topics``, the help texts behind ``help("if")`` and friends,
which ship with Python (about 460,000 characters of the language reference): nothing to
download. Characters outside printable ASCII are mapped to their ASCII look-alikes or
dropped, so the vocabulary is at most 96 characters.

    python examples/char_gpt.py [--iters N] [--n-layer N] [--n-embd N] [--batch-size N]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import attrs
import numpy as np

import lampy
import lampy.nn.functional as F
from lampy import nn, optim

# ----------------------------------------------------------------- data

# Typographic quotes, dashes and the ellipsis of the help texts, in ASCII.
_ASCII = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
    | {"\u2026": "..."}
)


def load_text() -> str:
    """Python's help texts (``pydoc_data.topics``), in printable ASCII and newlines."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[k] for k in sorted(topics)).translate(_ASCII)
    return "".join(c for c in text if c == "\n" or " " <= c <= "~")


@attrs.frozen
class Corpus:
    """A text as integer ids (int64), with the alphabet that maps them back."""

    chars: str
    train: np.ndarray
    valid: np.ndarray

    @classmethod
    def from_text(cls, text: str, valid_fraction: float = 0.1) -> Corpus:
        chars = "".join(sorted(set(text)))
        lookup = np.zeros(128, np.int64)
        lookup[[ord(c) for c in chars]] = np.arange(len(chars))
        ids = lookup[np.frombuffer(text.encode("ascii"), np.uint8)]
        n = int(len(ids) * (1 - valid_fraction))
        return cls(chars, ids[:n], ids[n:])

    def encode(self, s: str) -> np.ndarray:
        return np.array([self.chars.index(c) for c in s], np.int64)

    def decode(self, ids: Any) -> str:
        return "".join(self.chars[i] for i in ids)


def get_batch(
    data: np.ndarray, block_size: int, batch_size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``batch_size`` random windows of ``block_size`` ids and the ids that follow each."""
    start = rng.integers(0, len(data) - block_size - 1, batch_size)
    idx = start[:, None] + np.arange(block_size)
    return data[idx], data[idx + 1]


# ----------------------------------------------------------------- model


def _normal(rng: np.random.Generator, shape: tuple[int, ...], std: float = 0.02) -> lampy.Variable:
    return lampy.param(rng.normal(0.0, std, shape).astype(np.float32))


def _linear(rng: np.random.Generator, n_in: int, n_out: int, std: float = 0.02) -> nn.Linear:
    """nanoGPT's initialisation: weights N(0, std), biases zero."""
    return nn.Linear(_normal(rng, (n_out, n_in), std), lampy.param(np.zeros(n_out, np.float32)))


@attrs.frozen(eq=False, repr=False)
class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where each position sees itself and the ones before."""

    c_attn: nn.Linear  # the queries, keys and values of all heads: (C, 3C)
    c_proj: nn.Linear
    n_head: int

    def forward(self, x: lampy.Variable) -> lampy.Variable:
        b, t, c = x.shape
        h = self.n_head
        # (B, T, 3C) as (B, T, 3, H, C/H); q, k, v: (B, H, T, C/H), views of it. (Split
        # first and reshaping each part would cost a copy of each gradient in backward.)
        qkv = self.c_attn(x).reshape(b, t, 3, h, c // h)
        q, k, v = (qkv[:, :, i].swapaxes(1, 2) for i in range(3))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.swapaxes(1, 2).reshape(b, t, c))


@attrs.frozen(eq=False, repr=False)
class MLP(nn.Module):
    c_fc: nn.Linear
    c_proj: nn.Linear

    def forward(self, x: lampy.Variable) -> lampy.Variable:
        return self.c_proj(F.gelu(self.c_fc(x)))


@attrs.frozen(eq=False, repr=False)
class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    ln_1: nn.LayerNorm
    attn: CausalSelfAttention
    ln_2: nn.LayerNorm
    mlp: MLP

    def forward(self, x: lampy.Variable) -> lampy.Variable:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@attrs.frozen(eq=False, repr=False)
class GPT(nn.Module):
    """Token + position embeddings, ``n_layer`` blocks, a final LayerNorm, and logits
    from the token embedding's own matrix (tied output weights)."""

    wte: nn.Embedding
    wpe: nn.Embedding
    h: nn.ModuleList
    ln_f: nn.LayerNorm

    @classmethod
    def init(
        cls,
        vocab_size: int,
        block_size: int = 64,
        n_layer: int = 4,
        n_head: int = 4,
        n_embd: int = 128,
        *,
        rng: np.random.Generator,
    ) -> GPT:
        c = n_embd
        proj_std = 0.02 / math.sqrt(2 * n_layer)  # nanoGPT's scaling of residual outputs
        blocks = [
            Block(
                nn.LayerNorm.init(c),
                CausalSelfAttention(_linear(rng, c, 3 * c), _linear(rng, c, c, proj_std), n_head),
                nn.LayerNorm.init(c),
                MLP(_linear(rng, c, 4 * c), _linear(rng, 4 * c, c, proj_std)),
            )
            for _ in range(n_layer)
        ]
        return cls(
            nn.Embedding(_normal(rng, (vocab_size, c))),
            nn.Embedding(_normal(rng, (block_size, c))),
            nn.ModuleList.init(blocks),
            nn.LayerNorm.init(c),
        )

    def forward(self, idx: np.ndarray) -> lampy.Variable:
        """Logits (B, T, vocab) for the character after each position of ``idx`` (B, T)."""
        x = self.wte(idx) + self.wpe(np.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)

    def loss(self, idx: np.ndarray, targets: np.ndarray) -> lampy.Variable:
        logits = self(idx)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def configure_optimizer(
    model: GPT, lr: float, weight_decay: float = 0.1, betas: tuple[float, float] = (0.9, 0.99)
) -> optim.AdamW:
    """AdamW with weight decay on the 2-d weights (matrices, embeddings) only, as
    nanoGPT: biases and LayerNorm scales are not decayed."""
    params = model.parameters()
    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return optim.AdamW(groups, lr=lr, betas=betas)


def lr_factor(step: int, warmup: int, total: int, min_factor: float = 0.1) -> float:
    """Linear warm-up over ``warmup`` steps, then a cosine decay to ``min_factor``."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_factor + (1 - min_factor) * 0.5 * (1 + math.cos(math.pi * progress))


# ----------------------------------------------------------------- training, sampling


def estimate_loss(
    model: GPT, data: np.ndarray, block_size: int, batch_size: int, batches: int, rng: Any
) -> float:
    """The mean loss over ``batches`` random batches, without a graph."""
    losses = []
    with lampy.Scope(), lampy.no_grad():
        for _ in range(batches):
            x, y = get_batch(data, block_size, batch_size, rng)
            losses.append(float(model.loss(x, y).value))
    return float(np.mean(losses))


def sample(
    model: GPT,
    prompt: np.ndarray,
    n: int,
    block_size: int,
    rng: np.random.Generator,
    temperature: float = 0.8,
    top_k: int | None = 10,
) -> np.ndarray:
    """``prompt`` (ids) followed by ``n`` sampled ids: each drawn from the softmax of the
    last position's logits divided by ``temperature``, among the ``top_k`` likeliest."""
    ids = list(prompt)
    with lampy.no_grad():
        for _ in range(n):
            with lampy.Scope():
                context = np.array(ids[-block_size:])[None]
                logits = model(context).value[0, -1].astype(np.float64) / temperature
            if top_k is not None and top_k < len(logits):
                kth = np.partition(logits, -top_k)[-top_k]
                logits[logits < kth] = -np.inf
            p = np.exp(logits - logits.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    return np.array(ids)


def train(
    model: GPT,
    corpus: Corpus,
    iters: int,
    block_size: int,
    batch_size: int,
    lr: float,
    rng: np.random.Generator,
    eval_every: int = 100,
    eval_batches: int = 10,
) -> float:
    """Train for ``iters`` steps, printing the train and validation losses; returns the
    final validation loss."""
    opt = configure_optimizer(model, lr)
    warmup = max(1, iters // 10)
    sched = optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, warmup, iters))
    params = model.parameters()
    t0 = time.perf_counter()
    for step in range(iters + 1):
        if step % eval_every == 0 or step == iters:
            losses = [
                estimate_loss(model, d, block_size, batch_size, eval_batches, rng)
                for d in (corpus.train, corpus.valid)
            ]
            print(
                f"step {step:5d}: train loss {losses[0]:.3f}, valid loss {losses[1]:.3f} "
                f"({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
            if step == iters:
                return losses[1]
        x, y = get_batch(corpus.train, block_size, batch_size, rng)
        model.zero_grad()
        with lampy.Scope():
            model.loss(x, y).backward()
        optim.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
    raise AssertionError("unreachable")


def main(
    iters: int = 600,
    n_layer: int = 4,
    n_head: int = 4,
    n_embd: int = 128,
    block_size: int = 64,
    batch_size: int = 16,
    lr: float = 3e-3,
    seed: int = 0,
) -> float:
    lampy.tune_malloc()  # a training loop: freed graph memory is kept for the next step
    rng = np.random.default_rng(seed)
    corpus = Corpus.from_text(load_text())
    with lampy.Scope():
        model = GPT.init(len(corpus.chars), block_size, n_layer, n_head, n_embd, rng=rng)
        print(
            f"{len(corpus.train) + len(corpus.valid):,} characters, vocabulary "
            f"{len(corpus.chars)}; model: {model.num_parameters():,} parameters"
        )
        valid = train(model, corpus, iters, block_size, batch_size, lr, rng)
        out = sample(model, corpus.encode("The "), 300, block_size, rng)
        print("sample:\n" + corpus.decode(out))
    return valid


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=600, help="training steps")
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.iters, a.n_layer, a.n_head, a.n_embd, a.block_size, a.batch_size, a.lr, a.seed)
