#pragma once
// Training a SentencePiece vocabulary for models trained from random
// initialization, with libsentencepiece's trainer.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mtbert {

struct SentencePieceTrainingOptions {
  // "unigram" (SentencePiece's default, as in DeBERTa-v3), "bpe", "word" or "char".
  std::string model_type = "unigram";
  // The share of the training characters the model must cover; rarer
  // characters become [UNK] (or bytes, with byte_fallback).
  double character_coverage = 0.9995;
  // SentencePiece's normalization rule: "nmt_nfkc" (its default), "nfkc",
  // "nmt_nfkc_cf" / "nfkc_cf" (with case folding) or "identity".
  std::string normalization = "nmt_nfkc";
  // Train on at most this many lines, drawn at random with `seed` (0: all).
  int64_t max_sentences = 0;
  // Seeds SentencePiece's process-wide random generator (0xFFFFFFFF is
  // reserved by SentencePiece for "from std::random_device").
  uint32_t seed = 42;
  // Trainer threads; 0: one per core.
  int num_threads = 0;
  // Spell characters outside the vocabulary as UTF-8 byte pieces instead of [UNK].
  bool byte_fallback = false;
  // false: vocab_size is an upper bound, and a text too small to fill it gets
  // fewer pieces instead of an error (SentencePiece's hard_vocab_limit).
  bool hard_vocab_limit = true;
};

// Trains a model of `vocab_size` pieces on the lines of the UTF-8 text files
// `inputs` (empty lines skipped, \r\n accepted) and writes it to `model_file`
// atomically (name it `spm.model` in a model folder for load_tokenizer).
// [PAD], [UNK], [CLS], [SEP] and [MASK] are reserved at ids 0..4 ([CLS] and
// [SEP] as the model's bos and eos, [MASK] as a control symbol), so the BERT
// layout of sequence_encoder.h works with the result.
// UserError naming the file for a missing input or a line that is not UTF-8,
// and with SentencePiece's reason when training fails (no text, or a
// vocabulary size the text cannot fill).
void train_sentencepiece(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& model_file,
                         int64_t vocab_size, const SentencePieceTrainingOptions& options = {});

}  // namespace mtbert
