#!/usr/bin/env python3
"""`mtbert tokenize --spm` against Python's sentencepiece on the same model.

Trains two small models with python3-sentencepiece (the same library version
the C++ side links): one with the layout train_sentencepiece() gives
([PAD] [UNK] [CLS] [SEP] [MASK] at ids 0..4) and one with DeBERTa-v3's
([PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3, [MASK] appended after the vocabulary). Then
encodes a few hundred lines, single and paired, with the built binary
(MTBERT_BINARY) and checks every id against [CLS] + sp.encode(a) + [SEP]
(+ sp.encode(b) + [SEP]). Prints "N passed, M failed" per set; exits 1 on any
difference.
"""

import json
import os
import random
import subprocess
import sys
import tempfile

SHOWN_DIFFS = 5


def corpus(lines=400):
    """Made-up words plus some accents, CJK and emoji, deterministic."""
    rng = random.Random(7)
    syllables = ["ka", "ri", "to", "mo", "ne", "su", "la", "pe", "di", "go", "ba", "chi", "zu", "fen", "tor", "é",
                 "ü", "ñ", "中", "文"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(500)]
    text = []
    for _ in range(lines):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 15)))
        if rng.random() < 0.2:
            line = line.capitalize() + rng.choice([".", "!", "?", " 🍕", ",  ok"])
        text.append(line)
    return text


EXTRA_TEXTS = [
    "",
    "   ",
    "  leading and   inner   spaces  ",
    "ＦＵＬＬＷＩＤＴＨ １２３",  # NFKC-normalised by the model
    "Ünïcödé ñ 中文字 👍🏽 👨\u200d👩\u200d👧",
    "unknown letters: vwxyq ψ ж",
    "tab\tinside",
    "a" * 300,
]


def train(sp_module, directory, name, layout, lines):
    prefix = os.path.join(directory, name)
    sp_module.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=prefix, vocab_size=300, num_threads=1,
        minloglevel=1, **layout)
    return prefix + ".model"


def run_binary(binary, model, lines, extra_args):
    command = [binary, "tokenize", "--spm", model, "--format", "json", *extra_args]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    result = subprocess.run(command, input=data, capture_output=True, check=False)
    if result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(command)} exited with {result.returncode}: "
                 f"{result.stderr.decode(errors='replace').strip()}")
    return [json.loads(line) for line in result.stdout.decode("utf-8").split("\n")[:-1]]


def compare(name, binary, model, processor, cls, sep, texts, pairs=False):
    lines = ["\t".join(t) for t in texts] if pairs else texts
    outputs = run_binary(binary, model, lines, ["--pairs"] if pairs else [])
    if len(outputs) != len(texts):
        sys.exit(f"FAILED: {len(texts)} lines in, {len(outputs)} out")
    failed = []
    for text, got in zip(texts, outputs):
        if pairs:
            want = [cls] + processor.encode(text[0]) + [sep] + processor.encode(text[1]) + [sep]
        else:
            want = [cls] + processor.encode(text) + [sep]
        if got["ids"] != want:
            failed.append((text, got["ids"], want))
    print(f"{name}: {len(texts) - len(failed)} passed, {len(failed)} failed")
    for text, got, want in failed[:SHOWN_DIFFS]:
        print(f"  text      {text!r}\n  mtbert    {got}\n  reference {want}")
    return len(failed)


def main():
    try:
        import sentencepiece as spm
    except ImportError:
        print("SKIPPED: python3-sentencepiece is not installed")
        return 0
    binary = os.environ.get("MTBERT_BINARY")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit(f"FAILED: MTBERT_BINARY ({binary!r}) is not an executable")

    lines = corpus()
    texts = lines[:300] + EXTRA_TEXTS
    untabbed = [t for t in texts if "\t" not in t]  # --pairs splits lines on the tab
    pairs = list(zip(untabbed[::2], untabbed[1::2]))
    layouts = {
        # What train_sentencepiece() reserves.
        "mtbert layout": dict(pad_id=0, unk_id=1, bos_id=2, eos_id=3, pad_piece="[PAD]", unk_piece="[UNK]",
                              bos_piece="[CLS]", eos_piece="[SEP]", control_symbols="[MASK]"),
        # DeBERTa-v3's spm.model.
        "DeBERTa-v3 layout": dict(pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]", bos_piece="[CLS]",
                                  eos_piece="[SEP]", unk_piece="[UNK]"),
    }
    failed = 0
    with tempfile.TemporaryDirectory() as directory:
        for name, layout in layouts.items():
            model = train(spm, directory, name.split()[0], layout, lines)
            processor = spm.SentencePieceProcessor(model_file=model)
            cls, sep = processor.piece_to_id("[CLS]"), processor.piece_to_id("[SEP]")
            failed += compare(f"{name}, single texts", binary, model, processor, cls, sep, texts)
            failed += compare(f"{name}, pairs", binary, model, processor, cls, sep, pairs, pairs=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
