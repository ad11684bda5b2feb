"""Tiny random BERT and DeBERTa-v2/v3 models for tests: HF configs, seeded
random weights under mtbert's canonical names, the same weights under the names
of HuggingFace's checkpoints (with the pretraining heads and buffers a converter
must skip), a ~200-token WordPiece vocabulary, and a tiny SentencePiece model
with DeBERTa-v3's special pieces.

The weights are deliberately not HF's N(0, 0.02) initialisation: with such small
values every layer is nearly the identity behind its LayerNorm and tests could
not tell a correct encoder from a subtly wrong one. Here each linear layer
roughly preserves the scale of its input, so attention is far from uniform and
every parameter visibly affects the output.

HuggingFace's names are spelt out here, not derived from hf_checkpoint.NAMINGS,
so that the fixtures test the converter's renaming instead of repeating it.
"""
import io
import math
from collections import OrderedDict

import torch

from .hf_checkpoint import ARCHITECTURES


# --- BERT --------------------------------------------------------------------


SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_PUNCTUATION = tuple("!\"#$%&'()*+,-./:;?")
_SUFFIXES = ("##ing", "##ed", "##ly", "##er", "##est")
_WORDS = (
    "the an and or but not no is was are were be been has have had do did will would can "
    "it this that these those you he she we they me my your his her our their "
    "of to in on at for with from by as about so very too really just all some more most "
    "good great bad best worst fun funny boring love like hate enjoy "
    "movie film story plot acting actor actors character characters scene music "
    "time one two first last long short new old little big "
    "there here what who how why when which if then than also only even still "
    "make made see seen watch watched think know well never ever again people"
).split()


def tiny_vocab():
    """[PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4, then punctuation, digits,
    letters, ##letters, a few suffixes and common English words."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    tokens = [*SPECIAL_TOKENS, *_PUNCTUATION, *"0123456789", *letters,
              *("##" + c for c in letters), *_SUFFIXES, *_WORDS]
    assert len(set(tokens)) == len(tokens), "duplicate token in the tiny vocabulary"
    return tokens


def bert_config(vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
                intermediate_size, layer_norm_eps, type_vocab_size, max_position_embeddings=64):
    """A complete HF BertConfig dict, as `save_pretrained` writes it."""
    return {
        "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": intermediate_size,
        "layer_norm_eps": layer_norm_eps,
        "max_position_embeddings": max_position_embeddings,
        "model_type": "bert",
        "num_attention_heads": num_attention_heads,
        "num_hidden_layers": num_hidden_layers,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": type_vocab_size,
        "vocab_size": vocab_size,
    }


def random_bert_weights(config, seed, with_pooler=True):
    """Canonical name -> float32 tensor, deterministic for a given seed."""
    architecture = ARCHITECTURES["bert"]
    shapes = dict(architecture.tensor_shapes(config))
    if with_pooler:
        shapes.update(architecture.optional_groups(config)["pooler"])
    generator = torch.Generator().manual_seed(seed)
    return OrderedDict((name, _random_tensor(generator, name, shape)) for name, shape in shapes.items())


def _random_tensor(generator, name, shape):
    if name.endswith("LayerNorm.weight"):
        mean, std = 1.0, 0.2
    elif name.startswith("embeddings.word_embeddings"):
        mean, std = 0.0, 1.0
    elif name.startswith("embeddings."):
        mean, std = 0.0, 0.5
    elif name.endswith(".weight"):
        # A [out, in] Linear weight: unit-scale inputs give unit-scale outputs.
        mean, std = 0.0, 1.0 / math.sqrt(shape[1])
    else:
        mean, std = 0.0, 0.2
    values = torch.randn(shape, generator=generator, dtype=torch.float64) * std + mean
    return values.to(torch.float32)


def to_original_naming(weights, config, seed):
    """The same weights as the original bert-base-uncased pytorch_model.bin names
    them: a `bert.` prefix, LayerNorm gamma/beta, the position_ids buffer, and
    the pretraining heads (random, seeded): the masked-LM head, its decoder
    tied to the word embeddings, which a converter keeps, and the
    next-sentence head, which it skips."""
    original = OrderedDict()
    for name, tensor in weights.items():
        name = name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        original["bert." + name] = tensor
    original["bert.embeddings.position_ids"] = torch.arange(config["max_position_embeddings"])[None]
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    generator = torch.Generator().manual_seed(seed)
    for name, shape in (
            ("cls.predictions.bias", (vocab,)),
            ("cls.predictions.transform.dense.weight", (hidden, hidden)),
            ("cls.predictions.transform.dense.bias", (hidden,)),
            ("cls.predictions.transform.LayerNorm.gamma", (hidden,)),
            ("cls.predictions.transform.LayerNorm.beta", (hidden,)),
            ("cls.seq_relationship.weight", (2, hidden)),
            ("cls.seq_relationship.bias", (2,))):
        original[name] = (torch.randn(shape, generator=generator, dtype=torch.float64) * 0.2).to(torch.float32)
    # The decoder is tied to the word embeddings, and its bias to the head's.
    original["cls.predictions.decoder.weight"] = weights["embeddings.word_embeddings.weight"].clone()
    original["cls.predictions.decoder.bias"] = original["cls.predictions.bias"].clone()
    return original


# --- DeBERTa-v2/v3 -----------------------------------------------------------
# Weights are scaled as BERT's above.


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
    """Deterministic English-like sentences over the tiny vocabulary's words."""
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
