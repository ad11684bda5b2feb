"""Tiny random DeBERTa-v2/v3 models for tests: HF deberta-v2 configs, seeded
random weights under mtbert's canonical names, the same weights under
HuggingFace's DeBERTa names (with the pretraining heads a converter must
skip), and a tiny SentencePiece model with DeBERTa-v3's special pieces.

Weights follow tiny_bert.py's scaling (layers roughly preserve the scale of
their input), so that every parameter visibly affects the output.
"""
import io
from collections import OrderedDict

import torch

from .architectures import ARCHITECTURES
from .tiny_bert import _WORDS, _random_tensor

# DeBERTa-v3's spm.model: [PAD]=0, [CLS]=1, [SEP]=2, [UNK]=3; HF appends [MASK].
SPM_SPECIALS = {"pad": (0, "[PAD]"), "bos": (1, "[CLS]"), "eos": (2, "[SEP]"), "unk": (3, "[UNK]")}


def deberta_config(vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, *,
                   max_position_embeddings=64, relative_attention=True, max_relative_positions=-1,
                   position_buckets=-1, pos_att_type="p2c|c2p", share_att_key=True, norm_rel_ebd="layer_norm",
                   position_biased_input=False, type_vocab_size=0, embedding_size=None, layer_norm_eps=1e-7,
                   emd_layers=0):
    """A complete HF DebertaV2Config dict, as `save_pretrained` writes it
    (defaults: DeBERTa-v3's choices). emd_layers is mtbert's own key, written
    only when set."""
    config = {
        "architectures": ["DebertaV2ForMaskedLM"],
        "model_type": "deberta-v2",
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": intermediate_size,
        "layer_norm_eps": layer_norm_eps,
        "max_position_embeddings": max_position_embeddings,
        "max_relative_positions": max_relative_positions,
        "norm_rel_ebd": norm_rel_ebd,
        "num_attention_heads": num_attention_heads,
        "num_hidden_layers": num_hidden_layers,
        "pad_token_id": 0,
        "pooler_dropout": 0,
        "pooler_hidden_act": "gelu",
        "pooler_hidden_size": hidden_size,
        "pos_att_type": pos_att_type,
        "position_biased_input": position_biased_input,
        "position_buckets": position_buckets,
        "relative_attention": relative_attention,
        "share_att_key": share_att_key,
        "type_vocab_size": type_vocab_size,
        "vocab_size": vocab_size,
    }
    if embedding_size is not None:
        config["embedding_size"] = embedding_size
    if emd_layers:
        config["emd_layers"] = emd_layers
    return config


def random_deberta_weights(config, seed):
    """Canonical name -> float32 tensor, deterministic for a given seed."""
    shapes = ARCHITECTURES["deberta-v2"].tensor_shapes(config)
    generator = torch.Generator().manual_seed(seed)
    weights = OrderedDict()
    for name, shape in shapes.items():
        if name == "encoder.rel_embeddings.weight":
            # Unit scale, like the word embeddings: the position terms matter.
            weights[name] = torch.randn(shape, generator=generator, dtype=torch.float64).to(torch.float32)
        else:
            weights[name] = _random_tensor(generator, name, shape)
    return weights


_HF_RENAMES = tuple((f"attention.self.{n}.{kind}", f"attention.self.{n}_proj.{kind}")
                    for n in ("query", "key", "value") for kind in ("weight", "bias"))


def to_hf_naming(weights, config, seed, prefixed=True, unused_position_embeddings=False):
    """The same weights as HF's DeBERTa checkpoints name them: query_proj /
    key_proj / value_proj, a `deberta.` prefix and the masked-LM head of
    DebertaV2ForMaskedLM (prefixed=True), or DebertaV2Model's bare names.
    unused_position_embeddings adds a position table the config does not use
    (the converter must skip it)."""
    hf = OrderedDict()
    prefix = "deberta." if prefixed else ""
    for name, tensor in weights.items():
        for canonical, theirs in _HF_RENAMES:
            if name.endswith(canonical):
                name = name[:-len(canonical)] + theirs
                break
        hf[prefix + name] = tensor
    generator = torch.Generator().manual_seed(seed)
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    if unused_position_embeddings:
        width = config.get("embedding_size") or hidden
        hf[prefix + "embeddings.position_embeddings.weight"] = torch.randn(
            (config["max_position_embeddings"], width), generator=generator)
    if prefixed:
        hf["deberta.embeddings.position_ids"] = torch.arange(config["max_position_embeddings"])[None]
        for name, shape in (("lm_predictions.lm_head.dense.weight", (hidden, hidden)),
                            ("lm_predictions.lm_head.dense.bias", (hidden,)),
                            ("lm_predictions.lm_head.LayerNorm.weight", (hidden,)),
                            ("lm_predictions.lm_head.LayerNorm.bias", (hidden,)),
                            ("lm_predictions.lm_head.bias", (vocab,))):
            hf[name] = torch.randn(shape, generator=generator) * 0.2
    return hf


def tiny_corpus():
    """Deterministic English-like sentences over tiny_bert's word list."""
    words = list(_WORDS)
    sentences = []
    for i in range(400):
        length = 4 + (i * 7) % 9
        sentences.append(" ".join(words[(i * 31 + j * 17) % len(words)] for j in range(length)) + " .")
    sentences += ["The movie was GREAT!", "A boring plot, but fun actors.", "I love this film (really)."]
    return sentences


def train_tiny_spm(path, vocab_size=120):
    """Trains a unigram SentencePiece model on tiny_corpus() with DeBERTa-v3's
    special pieces and writes it to `path`. Deterministic (one thread, fixed
    corpus)."""
    import sentencepiece as spm  # only fixture writing needs it

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(tiny_corpus()), model_writer=model, model_type="unigram",
        vocab_size=vocab_size, character_coverage=1.0, num_threads=1, shuffle_input_sentence=False,
        **{f"{kind}_id": index for kind, (index, _) in SPM_SPECIALS.items()},
        **{f"{kind}_piece": piece for kind, (_, piece) in SPM_SPECIALS.items()},
        minloglevel=2)
    with open(path, "wb") as f:
        f.write(model.getvalue())
