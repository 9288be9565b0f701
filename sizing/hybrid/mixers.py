"""Token mixers that carry a fixed-size recurrent state instead of a KV cache: Mamba-2 (SSD),
Mamba-1 (Jamba's layers), gated DeltaNet (Qwen3-Next's linear attention) and Kimi Delta
Attention (Kimi Linear).

Parameters follow Hugging Face's modeling code tensor by tensor (transformers 5.24:
Mamba2Mixer, NemotronHMamba2Mixer and BambaMixer build the same Mamba-2 mixer; JambaMambaMixer
the Mamba-1 one; Qwen3NextGatedDeltaNet the DeltaNet); tests/fixtures/hf_counts_hybrid.json
holds the counts the modeling code gives on the meta device.

FLOPs (2 per multiply-add; matmul-like contractions only, as sizing.formulas.flops counts): the
projections (in_proj, out_proj, ...) at 2·params per token, the depthwise conv1d at
2·channels·kernel per token, and the scan's contractions:
- Mamba-2 chunked SSD (Dao & Gu 2024, arXiv:2405.21060 section 6, chunk length Q): per token,
  C·Bᵀ within the chunk (Q·N per group), its product with x (Q·P per head), the chunk state
  Bᵀ·x (N·P per head) and the output from the carried state C·h (N·P per head). The
  intra-chunk blocks are counted whole (Q keys per token), as the kernels compute them; the
  decay masks, exp, softplus and the inter-chunk recurrence (elementwise) count 0.
- Decode step, one token: the state update dt·B⊗x (N·P per head) and the read-out C·h (N·P).
- Mamba-1 (selective scan, no matmul form): its update and read-out, 2·d_inner·N MACs per
  token, in training and decode alike.
- Gated DeltaNet chunked (Yang et al. 2024, arXiv:2412.06464, the WY form of FLA's kernel,
  chunk Q): per token and value head, K·Kᵀ within the chunk (Q·d_k), w = T·K (Q·d_k),
  u = T·V (Q·d_v), Q·Kᵀ (Q·d_k), the attention-to-values product (Q·d_v), and against the
  carried d_k x d_v state: w·S, q·S and the update Kᵀ·v (3·d_k·d_v). The triangular solve
  for T (Q²/3 MACs per token) and the gates count 0. Decode: k·S, the rank-1 update and q·S
  (3·d_k·d_v MACs per head).

State per sequence (constant in the context): the conv state, `conv_channels x kernel`
elements (HF keeps the whole kernel window; vLLM keeps kernel - 1), and the recurrent state.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from sizing.validate import SizingError, require_bool, require_int

MAC = 2  # FLOPs per multiply-add


def _check_fields(spec) -> None:
    """Every size a positive int and every switch a bool, before a formula sees them (a config's
    field names are the spec's, prefixed by the mixer kind)."""
    for f in fields(spec):
        value = getattr(spec, f.name)
        if f.type.startswith("bool"):
            require_bool(f"{spec.kind} {f.name}", value)
        elif value is not None:
            require_int(f"{spec.kind} {f.name}", value, 1)


def linear_params(d_in: int, d_out: int, bias: bool) -> int:
    return d_in * d_out + (d_out if bias else 0)


def depthwise_conv_params(channels: int, kernel: int, bias: bool) -> int:
    """nn.Conv1d(c, c, k, groups=c): one k-tap filter per channel (+ one bias each)."""
    return channels * kernel + (channels if bias else 0)


@dataclass(frozen=True)
class Mamba2Mixer:
    """Mamba-2 (SSD) mixer. d model width, H heads of width P (d_inner = H·P), N state size,
    G groups sharing B and C, K conv kernel, Q scan chunk."""

    d_model: int
    n_heads: int
    head_dim: int
    d_state: int
    n_groups: int = 1
    conv_kernel: int = 4
    conv_bias: bool = True
    proj_bias: bool = False
    chunk: int = 256
    d_inner_proj: int | None = None  # HF Mamba2 sizes in/out_proj by expand·d; None: H·P
    gated_norm: bool = True  # Falcon-H1 with mamba_rms_norm false has none

    kind = "mamba2"

    def __post_init__(self) -> None:
        _check_fields(self)
        if self.n_heads % self.n_groups:
            raise SizingError(f"mamba2 n_heads ({self.n_heads}) must be divisible by n_groups ({self.n_groups})")

    @property
    def d_inner(self) -> int:
        return self.n_heads * self.head_dim if self.d_inner_proj is None else self.d_inner_proj

    @property
    def conv_channels(self) -> int:
        """x, B and C pass the conv: d_inner + 2·G·N."""
        return self.d_inner + 2 * self.n_groups * self.d_state

    def params(self) -> dict[str, int]:
        """in_proj d -> [z, x, B, C, dt] = d_inner + conv channels + H; dt_bias, A_log and D
        one per head; the gated RMSNorm one gain per d_inner; out_proj d_inner -> d."""
        H = self.n_heads
        out = {
            "mamba.in_proj": linear_params(self.d_model, self.d_inner + self.conv_channels + H, self.proj_bias),
            "mamba.conv1d": depthwise_conv_params(self.conv_channels, self.conv_kernel, self.conv_bias),
            "mamba.dt_bias": H,
            "mamba.A_log": H,
            "mamba.D": H,
            "mamba.norm": self.d_inner if self.gated_norm else 0,
            "mamba.out_proj": linear_params(self.d_inner, self.d_model, self.proj_bias),
        }
        return {k: v for k, v in out.items() if v}

    def _projection_flops(self) -> int:
        p = self.params()
        return MAC * (p["mamba.in_proj"] + p["mamba.out_proj"]) + MAC * self.conv_channels * self.conv_kernel

    def scan_flops_per_token(self) -> int:
        """Chunked SSD per token: G·Q·N + H·Q·P + 2·H·N·P multiply-adds."""
        H, P, N, G, Q = self.n_heads, self.head_dim, self.d_state, self.n_groups, self.chunk
        return MAC * (G * Q * N + H * Q * P + 2 * H * N * P)

    def prefill_flops_per_token(self) -> int:
        return self._projection_flops() + self.scan_flops_per_token()

    def decode_flops_per_token(self) -> int:
        """One recurrent step: update dt·B⊗x and read-out C·h, 2·H·P·N multiply-adds."""
        return self._projection_flops() + MAC * 2 * self.n_heads * self.head_dim * self.d_state

    def state_update_flops_per_token(self) -> int:
        """The decode step's rank-1 update dt·x⊗B (one multiply-add per state element), inside
        decode_flops_per_token; a FLOP counter sees this outer product as elementwise."""
        return MAC * self.n_heads * self.head_dim * self.d_state

    def state_elements(self) -> dict[str, int]:
        return {
            "conv": self.conv_channels * self.conv_kernel,
            "ssm": self.n_heads * self.head_dim * self.d_state,
        }


@dataclass(frozen=True)
class Mamba1Mixer:
    """Mamba-1 selective SSM as Jamba builds it: d_inner = expand·d, N state, R = dt rank, with
    RMSNorms on dt, B and C (Jamba's additions)."""

    d_model: int
    d_inner: int
    d_state: int
    dt_rank: int
    conv_kernel: int = 4
    conv_bias: bool = True
    proj_bias: bool = False
    bc_dt_norms: bool = True

    kind = "mamba1"

    def __post_init__(self) -> None:
        _check_fields(self)

    @property
    def conv_channels(self) -> int:
        return self.d_inner

    def params(self) -> dict[str, int]:
        e, N, R = self.d_inner, self.d_state, self.dt_rank
        out = {
            "mamba.in_proj": linear_params(self.d_model, 2 * e, self.proj_bias),  # x and the gate z
            "mamba.conv1d": depthwise_conv_params(e, self.conv_kernel, self.conv_bias),
            "mamba.x_proj": linear_params(e, R + 2 * N, False),  # dt (rank R), B, C
            "mamba.dt_proj": linear_params(R, e, True),
            "mamba.A_log": e * N,
            "mamba.D": e,
            "mamba.out_proj": linear_params(e, self.d_model, self.proj_bias),
        }
        if self.bc_dt_norms:
            out["mamba.norms"] = R + 2 * N  # dt_layernorm, b_layernorm, c_layernorm
        return out

    def _projection_flops(self) -> int:
        p = self.params()
        weights = p["mamba.in_proj"] + p["mamba.x_proj"] + p["mamba.dt_proj"] + p["mamba.out_proj"]
        return MAC * weights + MAC * self.d_inner * self.conv_kernel

    def scan_flops_per_token(self) -> int:
        return MAC * 2 * self.d_inner * self.d_state

    def prefill_flops_per_token(self) -> int:
        return self._projection_flops() + self.scan_flops_per_token()

    def decode_flops_per_token(self) -> int:
        return self.prefill_flops_per_token()

    def state_elements(self) -> dict[str, int]:
        return {"conv": self.d_inner * self.conv_kernel, "ssm": self.d_inner * self.d_state}


@dataclass(frozen=True)
class GatedDeltaNet:
    """Gated DeltaNet as Qwen3-Next builds it: h_k key heads of d_k, h_v value heads of d_v."""

    d_model: int
    n_k_heads: int
    n_v_heads: int
    d_k: int
    d_v: int
    conv_kernel: int = 4
    chunk: int = 64

    kind = "deltanet"

    def __post_init__(self) -> None:
        _check_fields(self)
        if self.n_v_heads % self.n_k_heads:
            raise SizingError(
                f"deltanet n_v_heads ({self.n_v_heads}) must be divisible by n_k_heads ({self.n_k_heads})"
            )

    @property
    def key_dim(self) -> int:
        return self.n_k_heads * self.d_k

    @property
    def value_dim(self) -> int:
        return self.n_v_heads * self.d_v

    @property
    def conv_channels(self) -> int:
        return 2 * self.key_dim + self.value_dim  # q, k, v

    def params(self) -> dict[str, int]:
        d, hv = self.d_model, self.n_v_heads
        return {
            "deltanet.in_proj_qkvz": linear_params(d, 2 * self.key_dim + 2 * self.value_dim, False),
            "deltanet.in_proj_ba": linear_params(d, 2 * hv, False),  # beta and the decay's input
            "deltanet.conv1d": depthwise_conv_params(self.conv_channels, self.conv_kernel, False),
            "deltanet.dt_bias": hv,
            "deltanet.A_log": hv,
            "deltanet.norm": self.d_v,  # one gated RMSNorm over d_v, shared by the heads
            "deltanet.out_proj": linear_params(self.value_dim, d, False),
        }

    def _projection_flops(self) -> int:
        p = self.params()
        weights = p["deltanet.in_proj_qkvz"] + p["deltanet.in_proj_ba"] + p["deltanet.out_proj"]
        return MAC * weights + MAC * self.conv_channels * self.conv_kernel

    def scan_flops_per_token(self) -> int:
        """3·Q·d_k + 2·Q·d_v + 3·d_k·d_v multiply-adds per value head."""
        Q, dk, dv = self.chunk, self.d_k, self.d_v
        return MAC * self.n_v_heads * (3 * Q * dk + 2 * Q * dv + 3 * dk * dv)

    def prefill_flops_per_token(self) -> int:
        return self._projection_flops() + self.scan_flops_per_token()

    def decode_flops_per_token(self) -> int:
        return self._projection_flops() + MAC * self.n_v_heads * 3 * self.d_k * self.d_v

    def state_update_flops_per_token(self) -> int:
        """The decode step's rank-1 update k⊗(β·(v - S·k)), inside decode_flops_per_token."""
        return MAC * self.n_v_heads * self.d_k * self.d_v

    def state_elements(self) -> dict[str, int]:
        return {"conv": self.conv_channels * self.conv_kernel, "ssm": self.n_v_heads * self.d_k * self.d_v}


@dataclass(frozen=True)
class KimiDeltaAttention:
    """Kimi Delta Attention (Kimi Linear, arXiv:2510.26692; HF KimiLinearDeltaAttention): H heads of D,
    q, k and v projections of d -> H·D each, a short depthwise conv over the three (no bias), the
    channel-wise forget gate (f_a d -> D, f_b D -> H·D, dt_bias H·D, A_log H), the beta projection
    d -> H, the output gate (g_a d -> D, g_b D -> H·D), a gated RMSNorm over D and o_proj H·D -> d.

    The chunked scan is gated DeltaNet's WY form with a decay per channel instead of per head; the
    decays are elementwise, so its contractions are GatedDeltaNet's with d_k = d_v = D."""

    d_model: int
    n_heads: int
    head_dim: int
    conv_kernel: int = 4
    chunk: int = 64

    kind = "kda"

    def __post_init__(self) -> None:
        _check_fields(self)

    @property
    def width(self) -> int:
        return self.n_heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        return 3 * self.width  # q, k, v

    def params(self) -> dict[str, int]:
        d, hd, D, H = self.d_model, self.width, self.head_dim, self.n_heads
        return {
            "kda.q_k_v_proj": 3 * linear_params(d, hd, False),
            "kda.conv1d": depthwise_conv_params(self.conv_channels, self.conv_kernel, False),
            "kda.forget_gate": linear_params(d, D, False) + linear_params(D, hd, False) + hd + H,
            "kda.b_proj": linear_params(d, H, False),
            "kda.g_proj": linear_params(d, D, False) + linear_params(D, hd, False),
            "kda.o_norm": D,
            "kda.o_proj": linear_params(hd, d, False),
        }

    def _projection_flops(self) -> int:
        d, hd, D, H = self.d_model, self.width, self.head_dim, self.n_heads
        weights = 3 * d * hd + 2 * (d * D + D * hd) + d * H + hd * d
        return MAC * weights + MAC * self.conv_channels * self.conv_kernel

    def _as_deltanet(self) -> GatedDeltaNet:
        D = self.head_dim
        return GatedDeltaNet(self.d_model, self.n_heads, self.n_heads, D, D, self.conv_kernel, self.chunk)

    def scan_flops_per_token(self) -> int:
        return self._as_deltanet().scan_flops_per_token()

    def prefill_flops_per_token(self) -> int:
        return self._projection_flops() + self.scan_flops_per_token()

    def decode_flops_per_token(self) -> int:
        return self._projection_flops() + MAC * self.n_heads * 3 * self.head_dim * self.head_dim

    def state_update_flops_per_token(self) -> int:
        return self._as_deltanet().state_update_flops_per_token()

    def state_elements(self) -> dict[str, int]:
        return {"conv": self.conv_channels * self.conv_kernel, "ssm": self.n_heads * self.head_dim * self.head_dim}


Mixer = Mamba2Mixer | Mamba1Mixer | GatedDeltaNet | KimiDeltaAttention
