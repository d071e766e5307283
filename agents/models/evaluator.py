"""A network as an MCTS evaluator: batched encoding, one forward pass, masked softmax.

Symmetry. The encoders are equivariant under the board's dihedral symmetries (tested in
tests/test_observations.py), but neither network family is: convolution kernels and the Dotsformer's
relative-position bias table are free parameters with no tied orientations, so a network gives a symmetric
position a symmetric policy only as far as training with symmetry augmentation taught it. With
``symmetrize=True`` the evaluator averages the network over the whole symmetry group (8 images on a square
board, 4 on a rectangle; each image's policy mapped back to the original actions), which makes the priors
and value exactly invariant: a position equal to its own image gets a policy that is equal on the moves
the symmetry swaps. It costs one forward pass per image.

Runtime. Every forward pass runs under ``torch.no_grad()``, not ``torch.inference_mode()``: inference mode
measured 2-4% faster on a 64-row pass (within this machine's noise), but a tensor a network caches lazily
during a forward pass in inference mode (the AlphaViT's action cells) cannot take part in a later training
step. ``runtime`` picks what runs the pass:

* ``"eager"``: the module itself (it sees later changes of its weights).
* ``"jit"``: a TorchScript copy made once from the weights of construction time (traced, frozen, then
  ``torch.jit.optimize_for_inference``: batch norms folded into the convolutions, oneDNN layouts). Within
  about 1e-5 of the eager outputs, which is the size of the eager network's own batch-to-batch differences
  on the CPU. A network it cannot trace, or whose traced copy disagrees with it on a probe batch, stays
  eager (with a warning); planes of another board than the network's run eagerly.
* ``"nnpack"``: a copy with its batch norms folded into the convolutions (``torch.fx``) and its 3x3
  convolutions of at least 32 channels in and out run by NNPACK (Winograd transforms, fewer multiplies than
  a direct convolution; one thread under ``torch.set_num_threads(1)``), a batch at most
  :data:`NNPACK_CHUNK` rows at a time (NNPACK's transforms of bigger batches fall out of the caches: on the
  shipped 5x5 ResNet 90 against 127 GFLOP/s at 256 rows). Within about 4e-5 of the eager logits on the shipped
  5x5 ResNet. Without NNPACK in the torch build the network stays eager (a warning).
* ``"int8"``: a copy with its ``nn.Linear`` layers quantised to int8 (``torch.ao.quantization.quantize_dynamic``;
  convolutions stay float). It changes the outputs: ``benchmarks/selfplay.py`` measures by how much.
* ``"onnx"``: the network exported to ONNX (``torch.onnx.export``, batch axis dynamic) and run by ONNX
  Runtime on the CPU with as many threads as torch has (``pip install 'dnb-env[onnx]'``: ``onnx`` and
  ``onnxruntime``). Like ``"jit"`` a copy of the construction-time weights, checked against the eager
  outputs on a probe batch (a network that does not export stays eager, with a warning); planes of
  another board than the network's run eagerly.
* ``"auto"``, what measured fastest on one CPU core at self-play's batch sizes (``benchmarks/selfplay.py``):
  ``"nnpack"`` for a ``resnet`` of 64 or more channels (the shipped 5x5 ResNet: 2.6x eager in self-play,
  ONNX Runtime 1.9x); otherwise ``"onnx"`` when ONNX Runtime is installed (the ``resnet`` cpu preset of 32
  channels 2.8x against NNPACK's 2.2x, the Dotsformer's 1.9x against eager's 1.4x, with the evaluation cache
  in every figure); without it ``"nnpack"`` for a ``resnet`` and ``"eager"`` for the others. On a GPU: eager.

``benchmarks/selfplay.py`` measures which of them pays for which network.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import torch

from dnb_env.core import GameState, geometry
from dnb_env.features import NimstringTable, nimstring_table
from dnb_env.observations import encode_batch, encoder_shape, transform_planes
from dnb_env.symmetry import action_permutation, symmetries


RUNTIMES = ("eager", "jit", "nnpack", "int8", "onnx", "auto")
NNPACK_CHUNK = 64  # rows per NNPACK forward pass


class NNPackConv2d(torch.nn.Module):
    """A stride-1 convolution of ``conv``'s weights run by ``torch._nnpack_spatial_convolution``."""

    def __init__(self, conv: torch.nn.Conv2d):
        super().__init__()
        weight = conv.weight.detach().clone()
        bias = conv.bias.detach().clone() if conv.bias is not None else torch.zeros(len(weight))
        self.register_buffer("weight", weight)
        self.register_buffer("bias", bias)
        self.padding = [int(p) for p in conv.padding]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch._nnpack_spatial_convolution(x.contiguous(), self.weight, self.bias, self.padding)


class Chunked(torch.nn.Module):
    """``module`` run on at most ``rows`` rows at a time, the outputs concatenated."""

    def __init__(self, module: torch.nn.Module, rows: int):
        super().__init__()
        self.module, self.rows = module, rows

    def forward(self, x: torch.Tensor) -> dict:
        if len(x) <= self.rows:
            return self.module(x)
        parts = [self.module(x[i:i + self.rows]) for i in range(0, len(x), self.rows)]
        return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


def _nnpack_copy(net):
    """``net`` with batch norms folded and its big 3x3 convolutions on NNPACK (module docstring)."""
    import torch.fx.experimental.optimization as fx_optimization

    if not torch._nnpack_available():  # also initialises NNPACK, which its convolution needs first
        raise RuntimeError("this torch build has no NNPACK")
    module = copy.deepcopy(net).eval()
    try:
        module = fx_optimization.fuse(module)
    except Exception:  # noqa: BLE001 - a network torch.fx cannot trace keeps its batch norms
        module = copy.deepcopy(net).eval()

    def swap(parent):
        for name, child in parent.named_children():
            if (isinstance(child, torch.nn.Conv2d) and child.kernel_size == (3, 3) and child.stride == (1, 1)
                    and child.dilation == (1, 1) and child.groups == 1 and not isinstance(child.padding, str)
                    and child.padding_mode == "zeros" and min(child.in_channels, child.out_channels) >= 32):
                setattr(parent, name, NNPackConv2d(child))
            else:
                swap(child)

    swap(module)
    return Chunked(module, NNPACK_CHUNK)


def _onnxruntime():
    """The ``onnxruntime`` module, after checking that torch's exporter has ``onnx``; a clear error without."""
    try:
        import onnx  # noqa: F401 - torch's exporter needs it
        import onnxruntime
    except ImportError:
        raise ImportError("runtime='onnx' needs onnx and onnxruntime: pip install 'dnb-env[onnx]'") from None
    return onnxruntime


class OnnxModule:
    """``net`` exported to ONNX and run by an ONNX Runtime session, called like the network: planes
    ``[B, C, H, W]`` (H, W those of the export) -> the dict of its outputs as CPU tensors."""

    def __init__(self, net, probe: torch.Tensor):
        import io

        onnxruntime = _onnxruntime()
        self.keys = list(net(probe).keys())
        keys = self.keys

        class Outputs(torch.nn.Module):  # the exporter takes tuples, not dicts
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, x):
                out = self.net(x)
                return tuple(out[k] for k in keys)

        buf = io.BytesIO()
        fastpath = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)  # the fused transformer layer has no ONNX form
        try:
            torch.onnx.export(Outputs().eval(), (probe,), buf, input_names=["planes"], output_names=keys,
                              dynamic_axes={name: {0: "batch"} for name in ["planes", *keys]}, opset_version=17,
                              dynamo=False)
        finally:
            torch.backends.mha.set_fastpath_enabled(fastpath)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(buf.getvalue(), options, providers=["CPUExecutionProvider"])

    def __call__(self, x: torch.Tensor) -> dict:
        outs = self.session.run(None, {"planes": x.detach().cpu().numpy()})
        return {k: torch.from_numpy(o) for k, o in zip(self.keys, outs)}


def have_onnx() -> bool:
    """Whether the ``"onnx"`` runtime can run here (``onnx`` and ``onnxruntime`` importable)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


def auto_runtime(net, device: str = "cpu") -> str:
    """The runtime ``"auto"`` stands for with ``net`` on ``device`` (module docstring)."""
    from agents.models import family_of

    if device != "cpu":
        return "eager"
    resnet = family_of(net.config) == "resnet"
    if resnet and net.config.width >= 64:
        return "nnpack"
    if have_onnx():
        return "onnx"
    return "nnpack" if resnet else "eager"


def inference_module(net, runtime: str = "eager", device: str = "cpu"):
    """What runs ``net``'s forward passes for ``runtime`` (module docstring): ``net`` itself, a TorchScript
    copy, an NNPACK copy, an int8 copy or an ONNX Runtime session; ``(module, input_shape)`` where ``input_shape`` ``(C, H, W)`` is the
    only input shape the module takes (None: any)."""
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if runtime == "auto":
        runtime = auto_runtime(net, device)
    if runtime == "eager":
        return net, None
    if runtime == "int8":
        if device != "cpu":
            raise ValueError(f"runtime='int8' runs on the CPU, not {device!r}")
        with warnings.catch_warnings():
            # torch marks torch.ao.quantization and its quantized tensors deprecated in favour of torchao, an
            # extra dependency this optional runtime does not take; the calls still work on the torch we pin
            warnings.filterwarnings("ignore", message="torch.ao.quantization is deprecated", category=DeprecationWarning)
            warnings.filterwarnings("ignore", message=".*quantized tensor creation functions", category=UserWarning)
            from torch.ao.quantization import quantize_dynamic

            return quantize_dynamic(copy.deepcopy(net), {torch.nn.Linear}, dtype=torch.qint8).eval(), None
    if runtime == "onnx":
        _onnxruntime()  # a missing dependency is an error, not a silent fallback
    g = geometry(net.config.board)
    planes = encode_batch(net.config.encoder, [GameState.new(g.rows, g.cols)] * 3)
    probe = torch.from_numpy(planes).to(device)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            if runtime == "nnpack":
                if device != "cpu":
                    raise ValueError(f"NNPACK runs on the CPU, not {device!r}")
                module = _nnpack_copy(net)
            elif runtime == "onnx":
                if device != "cpu":
                    raise ValueError(f"runtime='onnx' runs on the CPU, not {device!r}")
                module = OnnxModule(net, probe[:2])
            else:
                traced = torch.jit.trace(copy.deepcopy(net).eval(), probe[:2], strict=False, check_trace=False)
                module = torch.jit.optimize_for_inference(torch.jit.freeze(traced))
            want, got = net(probe), module(probe)  # another batch size than the trace's
        err = max(float((want[k].float() - got[k].float()).abs().max()) for k in want)
        if err > 1e-3:
            raise RuntimeError(f"the copy differs by {err:.3g}")
    except Exception as exc:  # noqa: BLE001 - any failure leaves the network eager
        warnings.warn(f"runtime={runtime!r}: {type(net).__name__} stays eager ({type(exc).__name__}: {exc})"[:300],
                      RuntimeWarning, stacklevel=2)
        return net, None
    return module, (None if runtime == "nnpack" else tuple(planes.shape[1:]))


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``logits [B, A]`` over the entries where ``masks [B, A]`` is true (0 elsewhere)."""
    z = np.where(masks, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


class RemotePlanes:
    """The evaluator interface over a network that lives elsewhere (another process, a Ray actor): a
    subclass gives ``encoder`` and ``evaluate_planes(planes, masks)``, which counts its ``calls``; this
    encodes the states for it."""

    encoder: str
    calls: int = 0

    def evaluate(self, states):
        planes = encode_batch(self.encoder, states)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        return self.evaluate_planes(planes, masks)

    def move_scope(self):
        """The block of one move's search: the Nimstring searches of its encoding (``chainloop6_nim``)
        share a table that the block starts empty (:func:`dnb_env.features.nimstring_table`)."""
        return nimstring_table()


class NetworkEvaluator:
    """``evaluate(states) -> (priors [B, A], values [B])`` with illegal moves given probability 0; values
    are in the network's units (``net.config.value``). ``evaluate_planes(planes, masks)`` does the same
    from encoded positions (what the native search passes). ``symmetrize=True``: the mean over the board's
    symmetric images (module docstring). ``runtime``: one of :data:`RUNTIMES` (module docstring; all but
    ``"eager"`` copy the weights once, here). ``threads``: torch's threads during each forward pass (the
    caller's restored after it); None: whatever torch has."""

    def __init__(self, net, device: str = "cpu", symmetrize: bool = False, runtime: str = "eager",
                 threads: int | None = None):
        self.net = net.to(device).eval()
        self.encoder = net.config.encoder
        self.device = device
        self.symmetrize = bool(symmetrize)
        self.runtime = runtime
        self._module, self._module_shape = inference_module(self.net, runtime, device)
        self.calls = 0
        self._warm: set[tuple[int, int]] = set()  # boards warm_up has run a pass on
        self.threads = threads
        # the table of its encoder's Nimstring searches (move_scope); a leaf like one whose search ran out of
        # positions is not searched again in the move
        self.nimstring = NimstringTable(give_up=True)

    def move_scope(self):
        """The block of one move's search (:class:`agents.search.agent.MCTSAgent` opens it): the Nimstring
        searches of the encoder (``chainloop6_nim``) share this evaluator's table, emptied when the block
        starts (:func:`dnb_env.features.nimstring_table`)."""
        return nimstring_table(self.nimstring)

    def warm_up(self, state) -> None:
        """One forward pass on ``state``'s board, once per board size: the first pass on a size allocates its
        buffers (the larger the board, the longer: 0.5-0.8 s on 12x12 beside busy processes), which a timed move
        should not pay for. The arena asks for it before a game's clock starts (the agents' ``prepare``)."""
        key = (state.rows, state.cols)
        if key not in self._warm:
            self.evaluate([state])
            self._warm.add(key)

    def evaluate(self, states):
        planes = encode_batch(self.encoder, states)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        g = states[0].geometry
        return self._forward(planes, masks, g.rows, g.cols)

    def evaluate_planes(self, planes: np.ndarray, masks: np.ndarray):
        """:meth:`evaluate` on positions already encoded: ``planes [B, C, H, W]`` float32 of this evaluator's
        ``encoder`` and legal ``masks [B, A]`` (the native search makes both in C++); same outputs as
        ``evaluate`` on the states they encode."""
        masks = np.asarray(masks).astype(bool)
        _, H, W = planes.shape[1:]
        rows, cols = (H - 1) // 2, (W - 1) // 2
        if rows < 1 or cols < 1 or encoder_shape(self.encoder, rows, cols)[1:] != (H, W):
            rows, cols = H, W  # an encoder with one cell per box
        shape = (len(planes), geometry(rows, cols).num_actions)
        if masks.shape != shape:
            raise ValueError(f"masks must have shape {shape} for planes of "
                             f"shape {planes.shape}, got {masks.shape}")
        return self._forward(np.ascontiguousarray(planes, dtype=np.float32), masks, rows, cols)

    def _run(self, planes: np.ndarray) -> dict:
        net = self._module if self._module_shape in (None, planes.shape[1:]) else self.net
        return net(torch.from_numpy(planes).to(self.device))

    def _forward(self, planes, masks, rows, cols):
        before = torch.get_num_threads()
        if self.threads is None or self.threads == before:
            return self._forward_passes(planes, masks, rows, cols)
        torch.set_num_threads(self.threads)  # a few microseconds
        try:
            return self._forward_passes(planes, masks, rows, cols)
        finally:
            torch.set_num_threads(before)

    @torch.no_grad()
    def _forward_passes(self, planes, masks, rows, cols):
        self.calls += 1
        if not self.symmetrize:
            out = self._run(planes)
            return masked_softmax(out["policy_logits"].float().cpu().numpy(), masks), out["value"].float().cpu().numpy()
        syms = symmetries(rows, cols)
        images = np.concatenate([transform_planes(sym, self.encoder, planes) for sym in syms])
        out = self._run(images)
        n = len(planes)
        logits = out["policy_logits"].float().cpu().numpy().reshape(len(syms), n, -1)
        priors = np.zeros(masks.shape)
        for k, sym in enumerate(syms):  # the image's move perm[a] is the original's move a
            priors += masked_softmax(logits[k][:, action_permutation(sym, rows, cols)], masks)
        values = out["value"].float().cpu().numpy().reshape(len(syms), n).mean(axis=0)
        return priors / len(syms), values
