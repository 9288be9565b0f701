"""A parallel training layout: how a model and a batch are split over GPUs, frozen and validated.

World size = dp x tp x pp x cp (Megatron-LM's order, tp innermost: tp-cp-dp-pp). Expert
parallelism adds no GPUs: within each pipeline stage Megatron-Core decomposes the same
tp x cp x dp ranks again, for the experts, as etp x ep x edp (megatron/core/parallel_state.py,
initialize_model_parallel: `expert_data_parallel_size = world_size // (expert_tensor_parallel_size
x expert_model_parallel_size x pipeline_model_parallel_size)`, ranks ordered tp-ep-dp-pp). Each
MoE layer's experts are split over ep ranks, each expert's matrices over etp ranks (expert
tensor parallelism, column/row-parallel as a dense MLP), and the expert weights' gradients are
reduced, and their optimizer states sharded, over the edp = tp cp dp / (ep etp) ranks holding
the same experts. So ep may span the tp ranks too: ep 32 on tp 2 x dp 16 is a valid layout
(etp 1). etp defaults to 1, as Megatron's MoE examples set it (examples/gptoss,
examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh: --expert-tensor-parallel-size 1); the
library's own default when none is given is etp = tp.

* dp with ZeRO 0-3 (Rajbhandari et al. 2020; flat buffers: DeepSpeed, Megatron's distributed
  optimizer) or FSDP (per-parameter dim-0 shards, torch FSDP2 `fully_shard`): `full` shards
  over all dp x cp ranks, `hybrid` (HSDP) shards over `shard_group` ranks and replicates
  across the groups.
* tp: Megatron tensor parallelism (column/row-parallel linears), optionally with sequence
  parallelism (norms and dropout regions sharded along the sequence); vocab-parallel
  embedding and lm_head.
* pp: pipeline stages of L/pp layers, or an uneven split (`stage_layers`, or by default the
  middle stages ceil(L/pp) and the first and last the rest: sizing.parallel.schedule), each
  rank's layers over v model chunks; schedule 1F1B (v = 1) or interleaved (v chunks per rank,
  Narayanan et al. 2021), m micro-batches per step (gradient accumulation).
* cp: context parallelism (ring attention over the sequence; needs a fused attention kernel).
* offload: optimizer states (and parameters) in CPU memory (ZeRO-Offload / FSDP CPUOffload).
* fine-tune mode: full, lora (rank r adapters on the named projections, only they trained),
  qlora (lora over NF4 base weights with double quantisation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.inputs import ModelConfig
from sizing.parallel.mixers import check_hybrid_split
from sizing.validate import SizingError, require_bool, require_choice, require_int
from sizing.vocabulary import FINETUNE_MODES as VOCABULARY_FINETUNE_MODES
from sizing.vocabulary import ceil_div

PP_SCHEDULES: tuple[str, ...] = ("1f1b", "interleaved")
FSDP_MODES: tuple[str, ...] = ("full", "hybrid")
FINETUNE_MODES = VOCABULARY_FINETUNE_MODES  # full, lora, qlora (sizing.vocabulary)
# Projections a LoRA adapter may sit on (the reference model's module names).
LORA_TARGETS: tuple[str, ...] = ("q", "k", "v", "o", "up", "gate", "down")
DEFAULT_LORA_TARGETS: tuple[str, ...] = ("q", "k", "v", "o", "up", "gate", "down")  # QLoRA paper: all linears
DEFAULT_LORA_RANK = 16
# The frozen base of a LoRA run: bf16, or int8 (bitsandbytes LLM.int8 rows, transformers' load_in_8bit).
LORA_BASES: tuple[str, ...] = ("bf16", "int8")
# Modules a LoRA run may train in full beside its adapters (PEFT's modules_to_save: embed_tokens, lm_head).
LORA_TRAINED_MODULES: tuple[str, ...] = ("embedding", "lm_head")
GPUS_PER_NODE = 8  # NVLink domain of a DGX/HGX node: groups inside it use nvlink_gbs, the rest network_gbs


@dataclass(frozen=True)
class ParallelLayout:
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int = 1  # expert tensor parallelism: each expert's matrices split over etp ranks
    zero: int = 0  # ZeRO stage over dp x cp (flat buffers); ignored when fsdp is set
    fsdp: str | None = None  # None, "full" or "hybrid" (FSDP2 per-parameter shards, stage 3)
    shard_group: int | None = None  # hybrid: ranks one shard spans (default: GPUs per node / (tp x cp))
    sequence_parallel: bool = False
    vocab_parallel: bool = True  # embedding and lm_head split over tp (Megatron's default)
    pp_schedule: str = "1f1b"
    v: int = 1  # model chunks per pipeline rank (interleaved)
    micro_batches: int = 1  # m: micro-batches per step per data-parallel rank
    micro_batch: int = 1  # b: sequences per micro-batch
    offload_optimizer: bool = False
    offload_params: bool = False
    finetune: str = "full"
    lora_rank: int = DEFAULT_LORA_RANK
    lora_targets: tuple[str, ...] = field(default=DEFAULT_LORA_TARGETS)
    lora_base: str = "bf16"  # lora: the frozen base's linears in bf16, or int8 (bitsandbytes load_in_8bit)
    lora_trained: tuple[str, ...] = ()  # lora/qlora: modules trained in full beside the adapters (PEFT modules_to_save)
    gpus_per_node: int = GPUS_PER_NODE
    stage_layers: tuple[int, ...] | None = None  # layers per pipeline stage (None: even, or first/last fewer)

    def __post_init__(self) -> None:
        for name in (
            "dp",
            "tp",
            "pp",
            "cp",
            "ep",
            "etp",
            "v",
            "micro_batches",
            "micro_batch",
            "lora_rank",
            "gpus_per_node",
        ):
            require_int(name, getattr(self, name))
        require_choice("zero", self.zero, (0, 1, 2, 3))
        if self.fsdp is not None:
            require_choice("fsdp", self.fsdp, FSDP_MODES)
        require_choice("pp_schedule", self.pp_schedule, PP_SCHEDULES)
        require_choice("finetune", self.finetune, FINETUNE_MODES)
        for name in ("sequence_parallel", "vocab_parallel", "offload_optimizer", "offload_params"):
            require_bool(name, getattr(self, name))
        if not isinstance(self.lora_targets, tuple) or not self.lora_targets:
            raise SizingError(f"lora_targets ({self.lora_targets!r}) must be a non-empty tuple of {LORA_TARGETS}")
        for target in self.lora_targets:
            require_choice("lora_targets", target, LORA_TARGETS)
        require_choice("lora_base", self.lora_base, LORA_BASES)
        if not isinstance(self.lora_trained, tuple):
            raise SizingError(f"lora_trained ({self.lora_trained!r}) must be a tuple of {LORA_TRAINED_MODULES}")
        for module in self.lora_trained:
            require_choice("lora_trained", module, LORA_TRAINED_MODULES)
        if self.stage_layers is not None:
            if not isinstance(self.stage_layers, tuple) or len(self.stage_layers) != self.pp:
                raise SizingError(f"stage_layers ({self.stage_layers!r}) must be a tuple of pp ({self.pp}) counts")
            for n in self.stage_layers:
                require_int("stage_layers", n)
        self._check_combinations()

    def _check_combinations(self) -> None:
        if self.sequence_parallel and self.tp == 1:
            raise SizingError("sequence_parallel (True) needs tp >= 2 (it shards the sequence over the tp ranks)")
        if self.pp_schedule == "1f1b" and self.v != 1:
            raise SizingError(f"v ({self.v}) must be 1 for pp_schedule 1f1b; use pp_schedule interleaved")
        if self.pp_schedule == "interleaved" and (self.pp == 1 or self.v < 2):
            raise SizingError(f"pp_schedule interleaved needs pp >= 2 and v >= 2 (got pp {self.pp}, v {self.v})")
        if self.pp > 1 and self.micro_batches < self.pp:
            raise SizingError(
                f"micro_batches ({self.micro_batches}) must be at least pp ({self.pp}) to fill the pipeline"
            )
        if self.expert_grid % (self.ep * self.etp):
            raise SizingError(
                f"ep x etp ({self.ep} x {self.etp}) must divide tp x cp x dp ({self.tp} x {self.cp} x {self.dp} = "
                f"{self.expert_grid}): Megatron-Core splits a stage's ranks into etp x ep x edp for the experts"
            )
        if self.fsdp is None and self.shard_group is not None:
            raise SizingError("shard_group applies to fsdp hybrid only")
        if self.fsdp == "full" and self.shard_group is not None:
            raise SizingError("shard_group applies to fsdp hybrid only (full shards over every dp x cp rank)")
        if self.fsdp == "hybrid":
            group = require_int("shard_group", self.hybrid_shard_group)
            if (self.dp * self.cp) % group:
                raise SizingError(f"shard_group ({group}) must divide dp x cp ({self.dp * self.cp})")
        if self.lora_base != "bf16" and self.finetune != "lora":
            raise SizingError(f"lora_base ({self.lora_base}) applies to finetune lora (qlora's base is NF4)")
        if self.lora_trained and self.finetune == "full":
            raise SizingError("lora_trained applies to finetune lora or qlora (full fine-tuning trains every module)")

    # ---- derived sizes
    @property
    def world(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def stage_chunks(self) -> int:
        """Model chunks over the pipeline: pp x v."""
        return self.pp * self.v

    @property
    def hybrid_shard_group(self) -> int:
        if self.shard_group is not None:
            return self.shard_group
        return max(1, min(self.dp * self.cp, self.gpus_per_node // (self.tp * self.cp) * self.cp))

    @property
    def shard_degree(self) -> int:
        """Ranks the (dense) model states are sharded over: dp x cp (ZeRO >= 1, FSDP full),
        the shard group (FSDP hybrid), 1 (ZeRO 0)."""
        if self.fsdp == "hybrid":
            return self.hybrid_shard_group
        if self.fsdp == "full" or self.zero > 0:
            return self.dp * self.cp
        return 1

    @property
    def zero_stage(self) -> int:
        return 3 if self.fsdp is not None else self.zero

    @property
    def expert_grid(self) -> int:
        """Ranks of one pipeline stage, which the experts are laid out over again: tp x cp x dp."""
        return self.tp * self.cp * self.dp

    @property
    def expert_data_parallel(self) -> int:
        """edp: ranks holding the same experts (the expert-data-parallel group), tp cp dp / (ep etp)."""
        return self.expert_grid // (self.ep * self.etp)

    def split_of(self, expert: bool) -> int:
        """Tensor-parallel ranks a weight is split over: etp for a routed expert's, tp otherwise."""
        return self.etp if expert else self.tp

    def expert_shard_degree(self) -> int:
        """Ranks the expert states are sharded over: the whole expert-data-parallel group under
        ZeRO >= 1 and FSDP full; under HSDP, its share inside one shard group (edp divided by the
        dp x cp / shard_group replicas, 1 where that does not divide); 1 under ZeRO 0."""
        if self.shard_degree == 1:
            return 1
        if self.fsdp == "hybrid":
            replicas = self.dp * self.cp // self.hybrid_shard_group
            return self.expert_data_parallel // replicas if self.expert_data_parallel % replicas == 0 else 1
        return self.expert_data_parallel

    def global_batch(self) -> int:
        """Sequences per optimizer step: b x m x dp."""
        return self.micro_batch * self.micro_batches * self.dp

    def check_model(self, cfg: ModelConfig, seq_len: int, attention_impl: str = "flash") -> None:
        """The layout against the model: every split must divide what it splits."""
        if getattr(cfg, "hybrid", None) is not None:  # its attention and state-mixer heads
            check_hybrid_split(cfg, self.tp, self.cp)
        elif cfg.n_heads % self.tp:
            raise SizingError(f"tp ({self.tp}) must divide n_heads ({cfg.n_heads})")
        if cfg.kv_heads % self.tp and getattr(cfg, "hybrid", None) is None:
            raise SizingError(
                f"tp ({self.tp}) must divide the kv heads ({cfg.kv_heads}); valid tp: "
                + ", ".join(str(t) for t in range(1, cfg.kv_heads + 1) if cfg.kv_heads % t == 0)
            )
        if self.stage_layers is not None and sum(self.stage_layers) != cfg.n_layers:
            raise SizingError(
                f"stage_layers ({','.join(map(str, self.stage_layers))}) must sum to n_layers ({cfg.n_layers})"
            )
        if self.pp > cfg.n_layers:
            raise SizingError(f"pp ({self.pp}) must be at most n_layers ({cfg.n_layers})")
        for name in ("ep", "etp"):
            if getattr(self, name) > 1 and not cfg.is_moe:
                raise SizingError(f"{name} ({getattr(self, name)}) needs a mixture-of-experts model (n_experts 0)")
        if cfg.is_moe and cfg.n_experts % self.ep:
            raise SizingError(f"ep ({self.ep}) must divide n_experts ({cfg.n_experts})")
        if seq_len % (self.cp * (self.tp if self.sequence_parallel else 1)):
            split = "cp x tp (sequence parallel)" if self.sequence_parallel else "cp"
            n = self.cp * (self.tp if self.sequence_parallel else 1)
            raise SizingError(f"{split} ({n}) must divide seq_len ({seq_len})")
        if self.cp > 1 and attention_impl != "flash":
            raise SizingError("cp >= 2 needs attention_impl flash (ring attention keeps no T x T tensor)")

    def check_world(self, gpus: int) -> None:
        """A GPU count given beside the layout must be its product dp x tp x pp x cp."""
        require_int("gpus", gpus)
        if gpus != self.world:
            raise SizingError(
                f"gpus ({gpus}) must equal dp x tp x pp x cp = {self.dp} x {self.tp} x {self.pp} x {self.cp} "
                f"= {self.world}"
            )

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["lora_targets"] = list(self.lora_targets)
        out["stage_layers"] = list(self.stage_layers) if self.stage_layers is not None else None
        out["world"] = self.world
        out["shard_degree"] = self.shard_degree
        out["expert_data_parallel"] = self.expert_data_parallel
        return out

    def label(self) -> str:
        """Short text: 'dp 8 (ZeRO-3) x tp 8 (SP) x pp 4 (1f1b, m 16)'."""
        sharding = f"FSDP {self.fsdp}" if self.fsdp else f"ZeRO-{self.zero}"
        if self.shard_degree not in (1, self.dp):
            sharding += f" over {self.shard_degree}"
        parts = [f"dp {self.dp} ({sharding})"]
        if self.tp > 1:
            parts.append(f"tp {self.tp}" + (" (SP)" if self.sequence_parallel else ""))
        if self.pp > 1:
            sched = "1f1b" if self.v == 1 else f"interleaved v {self.v}"
            parts.append(f"pp {self.pp} ({sched}, m {self.micro_batches})")
        if self.cp > 1:
            parts.append(f"cp {self.cp}")
        if self.ep > 1 or self.etp > 1:
            parts.append(f"ep {self.ep}" + (f" (etp {self.etp})" if self.etp > 1 else ""))
        text = " x ".join(parts)
        if self.offload_optimizer or self.offload_params:
            text += ", offload " + "+".join(
                w for w, on in (("optimizer", self.offload_optimizer), ("params", self.offload_params)) if on
            )
        if self.finetune != "full":
            text += f", {self.finetune} r {self.lora_rank}"
        return text


def per_rank(n: int, ranks: int) -> int:
    """The largest share of n items split over ranks as torch.chunk does (rank 0's): ceil(n / ranks)."""
    return ceil_div(n, ranks)
