"""Tiny random BERT models for tests: a ~200-token WordPiece vocabulary, configs,
seeded random weights under canonical names, and the original bert-base-uncased
naming of the same weights.

The weights are deliberately not HF's N(0, 0.02) initialisation: with such small
values every layer is nearly the identity behind its LayerNorm and tests could
not tell a correct encoder from a subtly wrong one. Here each linear layer
roughly preserves the scale of its input, so attention is far from uniform and
every parameter visibly affects the output.
"""
import math
from collections import OrderedDict

import torch

from .architectures import ARCHITECTURES

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
    the pretraining heads (random, seeded) that a converter must skip."""
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
            ("cls.predictions.decoder.weight", (vocab, hidden)),
            ("cls.seq_relationship.weight", (2, hidden)),
            ("cls.seq_relationship.bias", (2,))):
        original[name] = (torch.randn(shape, generator=generator, dtype=torch.float64) * 0.2).to(torch.float32)
    return original
