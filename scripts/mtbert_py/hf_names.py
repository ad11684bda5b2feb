"""Maps the tensor names of HuggingFace checkpoints onto mtbert's canonical names.

Canonical names are those of the bare HuggingFace base model (`BertModel`'s own
state dict: `embeddings.*`, `encoder.layer.{i}.*`, `pooler.*`), which the C++
modules register one-to-one. Checkpoints name the same tensors in several ways:
a task model prefixes the base model (`bert.`), the original TensorFlow-converted
releases call LayerNorm parameters gamma/beta, and pretraining or task heads and
buffers come along. Each model_type has one `Naming` entry saying how to undo that.
"""
import re
from dataclasses import dataclass

from .errors import UserError


@dataclass(frozen=True)
class Naming:
    # Prefix of the base model inside task-model checkpoints; stripped when present.
    prefix: str
    # (old suffix, new suffix) pairs applied after the prefix is stripped.
    renames: tuple
    # (regex matched at the start of the unprefixed name, why it is skipped).
    skips: tuple


NAMINGS = {
    "bert": Naming(
        prefix="bert.",
        renames=(
            ("LayerNorm.gamma", "LayerNorm.weight"),
            ("LayerNorm.beta", "LayerNorm.bias"),
        ),
        skips=(
            (r"cls\.", "pretraining head"),
            (r"classifier\.", "task head"),
            (r"embeddings\.position_ids$", "buffer"),
            (r"embeddings\.token_type_ids$", "buffer"),
        ),
    ),
    # DeBERTa-v2/v3 (HF DebertaV2Model and its task and pretraining models).
    # The structure DeBERTa shares with BERT keeps BERT's names, so that a BERT
    # checkpoint loads into a model with disentangled attention and the other
    # way round:
    #   deberta.embeddings.*                      -> embeddings.* (incl. embed_proj)
    #   deberta.encoder.layer.{i}.attention.self.query_proj.* -> ...attention.self.query.*
    #                                  key_proj.*   -> key.*      value_proj.* -> value.*
    #                                  pos_key_proj.*, pos_query_proj.*  kept
    #   deberta.encoder.layer.{i}.{attention.output,intermediate,output}.* kept
    #   deberta.encoder.rel_embeddings.weight, deberta.encoder.LayerNorm.* kept
    "deberta-v2": Naming(
        prefix="deberta.",
        renames=tuple(
            (f"attention.self.{name}_proj.{kind}", f"attention.self.{name}.{kind}")
            for name in ("query", "key", "value") for kind in ("weight", "bias")),
        skips=(
            (r"lm_predictions\.", "masked-LM pretraining head"),
            (r"mask_predictions\.", "replaced-token-detection pretraining head"),
            (r"pooler\.", "task-model pooler (ContextPooler), not part of DebertaV2Model"),
            (r"classifier\.", "task head"),
            (r"qa_outputs\.", "task head"),
            (r"embeddings\.position_ids$", "buffer"),
        ),
    ),
}


@dataclass
class NameMapping:
    canonical: dict  # source name -> canonical name, for every tensor kept
    skipped: list    # (source name, why) for every tensor dropped

    @property
    def renamed_count(self):
        return sum(source != target for source, target in self.canonical.items())


def map_names(model_type, source_names):
    """Sorts the source names into kept (with their canonical name) and skipped.
    Does not judge whether a kept name belongs to the architecture: that is
    architectures.check_tensors' job, which can then name the source tensor."""
    naming = NAMINGS[model_type]
    mapping = NameMapping(canonical={}, skipped=[])
    source_of = {}
    for source in source_names:
        name = source[len(naming.prefix):] if source.startswith(naming.prefix) else source
        reason = next((why for pattern, why in naming.skips if re.match(pattern, name)), None)
        if reason is not None:
            mapping.skipped.append((source, reason))
            continue
        for old, new in naming.renames:
            if name.endswith(old):
                name = name[:-len(old)] + new
                break
        if name in source_of:
            raise UserError(f"tensors '{source_of[name]}' and '{source}' both map to '{name}'")
        source_of[name] = source
        mapping.canonical[source] = name
    return mapping
