"""Cross-check lampy's MultiheadAttention and transformer modules against PyTorch.

For each configuration, in float64 and float32: build the torch module (dropout 0, so
both sides are deterministic), copy its state_dict into the lampy module with
``load_state_dict``, check that the keys, shapes and parameter counts agree, run the
forward pass on the same inputs and masks, backpropagate the same random cotangent, and
compare outputs (and attention weights), input gradients and every parameter's
gradient; then load lampy's state_dict back into a fresh torch module and compare its
output. Prints a table of the largest absolute differences and exits non-zero on a
mismatch.

Run: ``.venv/bin/python benchmarks/torch_checks/check_transformer.py``
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import lampy
from lampy.nn._attention import MultiheadAttention
from lampy.nn._normalization import LayerNorm
from lampy.nn._transformer import (
    TransformerDecoderLayer,
    TransformerEncoderLayer,
)
from lampy.nn._transformer_stacks import TransformerDecoder, TransformerEncoder

warnings.simplefilter("ignore")  # torch's nested-tensor and mask-type notices
TOL = {np.float64: 1e-9, np.float32: 5e-4}
TORCH_DTYPE = {np.float64: torch.float64, np.float32: torch.float32}


def _masks(rng: np.random.Generator, n: int, length: int, s: int, bf: bool) -> dict[str, Any]:
    causal = np.triu(np.ones((length, s), bool), 1)
    kpm = rng.random((n, s)) < 0.3
    kpm[:, 0] = False
    return {"attn_mask": causal, "key_padding_mask": kpm}


def _configs() -> list[tuple[str, Callable[..., Any], Callable[..., Any], Callable[..., Any]]]:
    """(name, torch builder, lampy builder, case maker) per configuration; the case
    maker returns (torch args, kwargs) as numpy arrays and which args need gradients."""
    out: list[Any] = []
    for bf in (False, True):
        for nw in (False, True):

            def t_mha(bf: bool = bf) -> Any:
                return torch.nn.MultiheadAttention(8, 2, batch_first=bf)

            def l_mha(dtype: Any, rng: Any, bf: bool = bf) -> Any:
                return MultiheadAttention.init(8, 2, batch_first=bf, dtype=dtype, rng=rng)

            def case(rng: Any, bf: bool = bf, nw: bool = nw) -> Any:
                q = rng.normal(size=(2, 5, 8) if bf else (5, 2, 8))
                kv = rng.normal(size=(2, 4, 8) if bf else (4, 2, 8))
                kw = {**_masks(rng, 2, 5, 4, bf), "need_weights": nw}
                return [q, kv, kv], kw, [0, 1]

            out.append((f"MHA cross bf={bf} need_weights={nw}", t_mha, l_mha, case))

    def t_kdim() -> Any:
        return torch.nn.MultiheadAttention(8, 4, kdim=3, vdim=5)

    def l_kdim(dtype: Any, rng: Any) -> Any:
        return MultiheadAttention.init(8, 4, kdim=3, vdim=5, dtype=dtype, rng=rng)

    def case_kdim(rng: Any) -> Any:
        args = [rng.normal(size=(5, 2, 8)), rng.normal(size=(4, 2, 3)), rng.normal(size=(4, 2, 5))]
        kw = {"attn_mask": rng.normal(size=(8, 5, 4)), "average_attn_weights": False}
        return args, kw, [0, 1, 2]

    out.append(("MHA kdim/vdim, 3-d float mask", t_kdim, l_kdim, case_kdim))

    def case_self_unbatched(rng: Any) -> Any:
        x = rng.normal(size=(5, 8))
        return [x, x, x], {"key_padding_mask": np.array([0, 0, 1, 0, 0], bool)}, [0]

    out.append(("MHA self, unbatched", t_mha, l_mha, case_self_unbatched))

    for nf in (False, True):
        for act in ("relu", "gelu"):

            def t_enc(nf: bool = nf, act: str = act) -> Any:
                layer = torch.nn.TransformerEncoderLayer(
                    8, 2, 16, 0.0, act, batch_first=True, norm_first=nf
                )
                return torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(8))

            def l_enc(dtype: Any, rng: Any, nf: bool = nf, act: str = act) -> Any:
                layer = TransformerEncoderLayer.init(
                    8, 2, 16, 0.0, act, batch_first=True, norm_first=nf, dtype=dtype, rng=rng
                )
                return TransformerEncoder.init(layer, 2, norm=LayerNorm.init(8, dtype=dtype))

            def case_enc(rng: Any) -> Any:
                m = _masks(rng, 3, 6, 6, True)
                return [rng.normal(size=(3, 6, 8)), m["attn_mask"], m["key_padding_mask"]], {}, [0]

            out.append((f"TransformerEncoder norm_first={nf} {act}", t_enc, l_enc, case_enc))

            def t_dec(nf: bool = nf, act: str = act) -> Any:
                layer = torch.nn.TransformerDecoderLayer(8, 2, 16, 0.0, act, norm_first=nf)
                return torch.nn.TransformerDecoder(layer, 2)

            def l_dec(dtype: Any, rng: Any, nf: bool = nf, act: str = act) -> Any:
                layer = TransformerDecoderLayer.init(
                    8, 2, 16, 0.0, act, norm_first=nf, dtype=dtype, rng=rng
                )
                return TransformerDecoder.init(layer, 2)

            def case_dec(rng: Any) -> Any:
                tgt, mem = rng.normal(size=(5, 2, 8)), rng.normal(size=(4, 2, 8))
                causal = np.triu(np.ones((5, 5), bool), 1)
                mkpm = np.array([[0, 0, 1, 0], [0, 0, 0, 0]], bool)
                kw = {"tgt_mask": causal, "memory_key_padding_mask": mkpm}
                return [tgt, mem], kw, [0, 1]

            out.append((f"TransformerDecoder norm_first={nf} {act}", t_dec, l_dec, case_dec))
    return out


def check(name: str, t_build: Any, l_build: Any, make_case: Any, dtype: Any) -> dict[str, float]:
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    tm = t_build().to(TORCH_DTYPE[dtype])
    args, kw, grad_args = make_case(rng)
    args = [a.astype(dtype) if a.dtype.kind == "f" else a for a in args]
    kw = {
        k: v.astype(dtype) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
        for k, v in kw.items()
    }
    diffs: dict[str, float] = {}
    with lampy.Scope():
        lm = l_build(dtype, np.random.default_rng(1))
        t_sd = tm.state_dict()
        l_sd = lm.state_dict()
        assert [(k, tuple(v.shape)) for k, v in t_sd.items()] == [
            (k, v.shape) for k, v in l_sd.items()
        ], f"{name}: state_dict keys/shapes differ"
        assert sum(p.numel() for p in tm.parameters()) == lm.num_parameters()
        lm.load_state_dict({k: v.detach().numpy() for k, v in t_sd.items()})

        # Same object where torch sees the same tensor (self-attention, key is value).
        t_args: list[Any] = []
        l_args: list[Any] = []
        for i, a in enumerate(args):
            j = next(j for j in range(i + 1) if args[j] is a)
            if j < i:
                t_args.append(t_args[j])
                l_args.append(l_args[j])
            elif i in grad_args:
                t_args.append(torch.tensor(a, requires_grad=True))
                l_args.append(lampy.param(a))
            else:
                t_args.append(torch.tensor(a))
                l_args.append(a)
        t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        t_out = tm(*t_args, **t_kw)
        l_out = lm(*l_args, **kw)
        t_main = t_out[0] if isinstance(t_out, tuple) else t_out
        l_main = l_out[0] if isinstance(l_out, tuple) else l_out
        cot = rng.normal(size=l_main.shape).astype(dtype)
        loss_t = (t_main * torch.tensor(cot)).sum()
        loss_l = (l_main * cot).sum()
        if isinstance(t_out, tuple) and t_out[1] is not None:
            wc = rng.normal(size=l_out[1].shape).astype(dtype)
            loss_t = loss_t + (t_out[1] * torch.tensor(wc)).sum()
            loss_l = loss_l + (l_out[1] * wc).sum()
            diffs["weights"] = float(np.abs(l_out[1].value - t_out[1].detach().numpy()).max())
        loss_t.backward()
        loss_l.backward()
        diffs["output"] = float(np.abs(l_main.value - t_main.detach().numpy()).max())
        seen = set()
        d_in = 0.0
        for ta, la in zip(t_args, l_args, strict=True):
            if isinstance(la, lampy.Variable) and id(la) not in seen:
                seen.add(id(la))
                d_in = max(d_in, float(np.abs(la.grad - ta.grad.numpy()).max()))
        diffs["input grads"] = d_in
        l_params = dict(lm.named_parameters())
        diffs["param grads"] = max(
            float(np.abs(l_params[k].grad - p.grad.numpy()).max()) for k, p in tm.named_parameters()
        )
        # lampy's state back into a fresh torch module: same output.
        torch.manual_seed(123)
        fresh = t_build().to(TORCH_DTYPE[dtype])
        fresh.load_state_dict({k: torch.tensor(v.copy()) for k, v in lm.state_dict().items()})
        f_out = fresh(*[t.detach() for t in t_args], **t_kw)
        f_main = f_out[0] if isinstance(f_out, tuple) else f_out
        diffs["reloaded"] = float(np.abs(f_main.detach().numpy() - t_main.detach().numpy()).max())
    return diffs


def main() -> int:
    bad = 0
    heads = ("output", "weights", "in grad", "p grad", "reload")
    print(f"{'configuration':46s} {'dtype':8s} " + " ".join(f"{h:>9s}" for h in heads))
    for name, t_build, l_build, make_case in _configs():
        for dtype in (np.float64, np.float32):
            d = check(name, t_build, l_build, make_case, dtype)
            ok = all(v <= TOL[dtype] * (10 if "grad" in k else 1) for k, v in d.items())
            bad += not ok
            w = f"{d['weights']:9.1e}" if "weights" in d else f"{'-':>9s}"
            print(
                f"{name:46s} {np.dtype(dtype).name:8s} {d['output']:9.1e} {w} "
                f"{d['input grads']:9.1e} {d['param grads']:9.1e} {d['reloaded']:9.1e}"
                f"{'' if ok else '  MISMATCH'}"
            )
    print("all agree" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
