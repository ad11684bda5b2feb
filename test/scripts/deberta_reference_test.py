#!/usr/bin/env python3
"""The DeBERTa references (test/reference/deberta_reference.py) against each
other and against hand-computed values: implementation A (vectorized) and B
(Algorithm 1's loops) agree on every option the fixtures use; the log-bucket
formula gives the values worked out by hand; and with every DeBERTa option
off, A is exactly BERT (the independent BERT reference)."""
import sys

import torch

from mini_runner import run_tests
from mtbert_py.tiny_models import bert_config, deberta_config, random_bert_weights, random_deberta_weights
import bert_reference
import deberta_reference as ref

VOCAB = 90


def inputs(seed, batch=3, length=11, type_vocab=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, VOCAB, (batch, length), generator=g)
    lengths = torch.tensor([length] + [length - 3 - i for i in range(batch - 1)])
    mask = (torch.arange(length)[None] < lengths[:, None]).long()
    types = ((torch.arange(length)[None] >= lengths[:, None] // 2) & mask.bool()).long() if type_vocab else None
    return ids * mask, mask, types


def check_a_equals_b(config, seed):
    weights = random_deberta_weights(config, seed)
    ids, mask, types = inputs(seed, type_vocab=config["type_vocab_size"])
    a = ref.forward_a(weights, config, ids, mask, types)["last_hidden_state"]
    b = ref.forward_b(weights, config, ids, mask, types)["last_hidden_state"]
    diff = ref.max_abs_diff_unpadded(a, b, mask)
    print(f"    max |A - B| {diff:.2e}")
    assert diff < 1e-10, diff
    return a


def test_log_buckets_by_hand():
    # DeBERTa-v3: 256 buckets, max_relative_positions 512 -> mid 128,
    # log((512 - 1) / 128) = 1.384362; e.g. d = 200: ln(1.5625) / 1.384362 * 127
    # = 40.94 -> ceil 41 -> 128 + 41 = 169.
    hand = {0: 0, 5: 5, -5: -5, 128: 128, -128: -128, 129: 129, 200: 169, -200: -169, 300: 207,
            511: 255, -511: -255, 1000: 317}
    for d, expected in hand.items():
        assert ref.log_bucket_scalar(d, 256, 512) == expected, (d, ref.log_bucket_scalar(d, 256, 512))
    distances = torch.tensor(list(hand))
    assert ref.log_bucket_tensor(distances, 256, 512).tolist() == list(hand.values())


def test_relative_rows_clamp_at_k():
    config = deberta_config(VOCAB, 8, 1, 2, 8, max_relative_positions=3, pos_att_type="c2p")
    rows = ref.relative_rows_a(6, config)
    # row(i, j) = clamp(i - j + 3, 0, 5)
    assert rows[0].tolist() == [3, 2, 1, 0, 0, 0]
    assert rows[5].tolist() == [5, 5, 5, 5, 4, 3]
    assert all(ref.relative_row_b(i, j, config) == rows[i, j] for i in range(6) for j in range(6))


def test_a_equals_b_deberta_v3_style():
    check_a_equals_b(deberta_config(VOCAB, 16, 2, 4, 24, position_buckets=8, max_relative_positions=20), 1)


def test_a_equals_b_separate_projections_absolute_positions_types():
    check_a_equals_b(deberta_config(VOCAB, 12, 2, 3, 20, max_relative_positions=4, share_att_key=False,
                                    norm_rel_ebd="none", position_biased_input=True, type_vocab_size=2,
                                    pos_att_type=["c2p", "p2c"]), 2)


def test_a_equals_b_single_terms_and_embed_proj():
    check_a_equals_b(deberta_config(VOCAB, 16, 1, 2, 16, pos_att_type="c2p", share_att_key=False,
                                    embedding_size=10, max_relative_positions=16), 3)
    check_a_equals_b(deberta_config(VOCAB, 16, 1, 2, 16, pos_att_type="p2c", position_buckets=6,
                                    max_relative_positions=12), 4)


def test_a_equals_b_position_to_position():
    # All four terms: shared keys, log buckets (8, max 20, so N = 12 uses them).
    check_a_equals_b(deberta_config(VOCAB, 16, 2, 4, 24, position_buckets=8, max_relative_positions=20,
                                    pos_att_type="c2p|p2c|p2p"), 6)
    # p2p alone needs both separate projections; k = 3 < N clamps.
    check_a_equals_b(deberta_config(VOCAB, 12, 1, 3, 20, max_relative_positions=3, share_att_key=False,
                                    norm_rel_ebd="none", pos_att_type=["p2p"]), 7)


def test_a_equals_b_emd():
    check_a_equals_b(deberta_config(VOCAB, 16, 2, 4, 24, position_buckets=8, max_relative_positions=20,
                                    emd_layers=2), 5)


def test_all_options_off_is_bert():
    bert = bert_config(VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=24,
                       layer_norm_eps=1e-7, type_vocab_size=2)
    weights = random_bert_weights(bert, 6, with_pooler=False)
    config = deberta_config(VOCAB, 16, 2, 4, 24, relative_attention=False, pos_att_type=None,
                            norm_rel_ebd="none", position_biased_input=True, type_vocab_size=2)
    ids, mask, types = inputs(6, type_vocab=2)
    a = ref.forward_a(weights, config, ids, mask, types)["last_hidden_state"]
    b = bert_reference.forward_a(weights, bert, ids, mask, types)["last_hidden_state"]
    assert ref.max_abs_diff_unpadded(a, b, mask) < 1e-10


def test_position_terms_matter():
    config = deberta_config(VOCAB, 16, 1, 2, 16, max_relative_positions=5)
    weights = random_deberta_weights(config, 7)
    ids, mask, _ = inputs(7)
    full = ref.forward_a(weights, config, ids, mask)["last_hidden_state"]
    for terms in ("c2p", "p2c", "c2p|p2c|p2p"):
        partial = ref.forward_a(weights, {**config, "pos_att_type": terms}, ids, mask)["last_hidden_state"]
        assert ref.max_abs_diff_unpadded(full, partial, mask) > 1e-2


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
