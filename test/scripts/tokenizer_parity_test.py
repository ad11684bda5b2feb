#!/usr/bin/env python3
"""`mtbert tokenize` against the independent Python reference, token by token.

Runs the built binary (MTBERT_BINARY) with bert-base-uncased's vocab.txt from
the shared data folder (MTBERT_DATA) on
  * every sentence of ids-sst-train.csv, lowercased and cased,
  * every sentence pair of quora-dev-split-dev.csv (--pairs --max-length 128),
  * a Unicode stress set: hand-picked hard cases plus random mixtures of them,
    lowercased and cased,
  * every code point of every Unicode category (unassigned and private-use
    ones sampled), alone and inside a word, lowercased and cased,
and compares tokens, ids, token types and attention masks with
test/reference/bert_tokenizer_reference.py. Prints "N passed, M failed" per
set and the first differences; exits 1 on any difference.
"""

import csv
import ctypes
import ctypes.util
import json
import os
import random
import subprocess
import sys
import unicodedata

SOURCE_DIR = os.environ.get("MTBERT_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE_DIR, "test", "reference"))
from bert_tokenizer_reference import ReferenceBertTokenizer  # noqa: E402

SHOWN_DIFFS = 5


def read_tsv_column(path, columns):
    """The given columns of a tab-separated file with a header row."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header = rows[0]
    index = [header.index(c) for c in columns]
    return [tuple(single_line(row[i]) for i in index) for row in rows[1:]]


def single_line(text):
    # The binary reads one text per line (and --pairs splits on the tab):
    # BERT cleans \t \n \r to a space, so replacing them changes no token.
    return text.replace("\r", " ").replace("\n", " ").replace("\t", " ")


def run_binary(binary, vocab, lines, extra_args):
    command = [binary, "tokenize", "--vocab", vocab, "--format", "json", *extra_args]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    result = subprocess.run(command, input=data, capture_output=True, check=False)
    if result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(command)} exited with {result.returncode}: "
                 f"{result.stderr.decode(errors='replace').strip()}")
    # split("\n"), not splitlines(): JSON strings may hold U+2028 and U+0085.
    outputs = [json.loads(line) for line in result.stdout.decode("utf-8").split("\n")[:-1]]
    if len(outputs) != len(lines):
        sys.exit(f"FAILED: {len(lines)} lines in, {len(outputs)} out of {' '.join(command)}")
    return outputs


def compare(name, binary, vocab, lower_case, texts, pairs=False, max_length=0):
    """Runs one set; returns the number of mismatches."""
    reference = ReferenceBertTokenizer(vocab, lower_case=lower_case)
    args = []
    if not lower_case:
        args.append("--no-lower-case")
    if pairs:
        args.append("--pairs")
    if max_length:
        args += ["--max-length", str(max_length)]
    lines = ["\t".join(t) if pairs else t for t in texts]
    outputs = run_binary(binary, vocab, lines, args)

    failed = []
    for text, got in zip(texts, outputs):
        ids, types, mask = (reference.encode_for_model(text[0], text[1], max_length) if pairs
                            else reference.encode_for_model(text, None, max_length))
        tokens = [reference.pieces[i] for i in ids]
        if (got["tokens"], got["ids"], got["token_type_ids"], got["attention_mask"]) != (tokens, ids, types, mask):
            failed.append((text, got["tokens"], tokens))
    print(f"{name}: {len(texts) - len(failed)} passed, {len(failed)} failed")
    for text, got, want in failed[:SHOWN_DIFFS]:
        print(f"  text      {text!r}\n  mtbert    {got}\n  reference {want}")
    return len(failed)


def stress_texts():
    hand_picked = [
        "Héllo naïve résumé café Ångström Ærøskøbing",
        "H\u00e9llo He\u0301llo",
        "  \tHeLLo!how  \u2028 Are yoU?  ",
        "ah\u535a\u63a8zz",
        "ΟΔΥΣΣΕΥΣ Σίσυφος ὅς ΐ ς σ Σ",
        "İstanbul IŞIK ıi İ\u0323",
        "ＡＢＣ１２３！？　ｶﾀｶﾅ ﬁ ﬂ ㎏ ①②",
        "\U0001d400\U0001d401 \U0001d518\U0001d52b",
        "👍🏽 👨\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 ❤️ 🇺🇸",
        "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # flag with tag characters
        "مرحبا بالعالم، كيف حالك؟ \u0627\u064e\u0644\u0652",
        "שָׁלוֹם עוֹלָם",
        "नमस्ते दुनिया क़",
        "สวัสดีชาวโลก",
        "안녕하세요 세계 \u1100\u1161\u11a8 \u3164",
        "こんにちは世界 カタカナ ｱｲｳ",
        "中文分词测试，标点！《书名》",
        "\U00020000\U00020001 \U0002a700 \U0002b740 \U0002b820 \U0002ceb0 \U0002f800 \uf900\ufa0e\ufa6d",
        "\u2e80 \u2f00 \u3007 \u3005 \u30fc",
        "Tiếng Việt có dấu ặ ờ",
        "Z\u0334\u0321\u031ba\u0338l\u0336g\u0337o\u0335",
        "e\u0301 a\u0308\u0304 \u0301x \u0301 q\u0323\u0307",
        "a\x00b\x01c\x7fd\u0085e\u200bf\u200dg\ufeffh\ufffdi\u00adj\x1ck\x0bl\x0cm",
        "a\u00a0b\u2009c\u3000d\u2028e\u2029f\u202fg\u1680h\u180ei\u200cj",
        "a\tb\t\tc",
        "3.14 1,000,000 ½ ² ¹⁄₂ 10% $5 #1 @home a+b=c x^2 ~",
        "...!!! -- — – ‘quoted’ «guillemets» ¿qué? ¡sí! 「括弧」 ・ ‐ ‽ ⁂ 〜",
        "don't it's rock 'n' roll O'Brien’s",
        "[CLS] [SEP]x[PAD]y [MASK][UNK] [cls] [CL\u200bS] [UN\u212a] [[CLS]] [SEP",
        "a" * 100 + " " + "b" * 101,
        "é" * 100 + " " + "é" * 101 + " " + "e\u0301" * 60,
        "\u212a\u212b\u2126 \u1fef \u037e \u0387",
        "\ufeffhello \ue000 \U000f0000 \ufdd0 \uffff \u0378",
        "\U000e0001 \U000e0020 \ufe0f \ufe00 \U000e0100",
        "Ǆ ǅ ǆ ẞ ß ŉ Ꭰꭰ ᲐᲑ 𐐀𐐨 Եւ",
        "\u0130\u0130\u0130 \u0049\u0307",
        "",
        "   ",
        "\u3000\u2028\u00a0",
    ]
    pool = sorted(set("".join(hand_picked)) - {"\n", "\r"}) + list("abcXYZ   ")
    rng = random.Random(20240601)
    mixtures = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    return hand_picked + mixtures


def utf8proc_tables():
    """utf8proc's category and lowercase functions, from the library the binary uses."""
    name = ctypes.util.find_library("utf8proc") or "libutf8proc.so.2"
    lib = ctypes.CDLL(name)
    lib.utf8proc_category.argtypes = [ctypes.c_int32]
    lib.utf8proc_tolower.argtypes = [ctypes.c_int32]
    lib.utf8proc_tolower.restype = ctypes.c_int32
    lib.utf8proc_unicode_version.restype = ctypes.c_char_p
    return lib


# utf8proc_category()'s enumeration order.
UTF8PROC_CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
                       "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]


def code_point_texts():
    """Each code point alone and inside a word; returns (texts, excluded)."""
    lib = utf8proc_tables()
    texts, excluded = [], 0
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or cp in (0x0A, 0x0D):
            continue  # surrogates cannot be UTF-8; \n and \r end the binary's lines
        ch = chr(cp)
        category = unicodedata.category(ch)
        # utf8proc 2.8 implements Unicode 15.0, Python 3.11's unicodedata
        # Unicode 14.0 (other versions may pair up differently): a code point
        # whose category or lowercase differs between the two (mostly the
        # 4,489 characters new in 15.0) is tokenized differently by design.
        lowered = ch.lower()
        if (UTF8PROC_CATEGORIES[lib.utf8proc_category(cp)] != category
                or (len(lowered) == 1 and lowered != chr(lib.utf8proc_tolower(cp)))):
            excluded += 1
            continue
        if category in ("Cn", "Co") and cp % 97 != 0:
            continue  # unassigned and private-use code points all behave alike: a sample
        texts.append(f"{ch} a{ch}b")
    return texts, excluded, lib.utf8proc_unicode_version().decode()


def main():
    data = os.environ.get("MTBERT_DATA") or os.path.join(SOURCE_DIR, "..", "shared", "data")
    vocab = os.path.join(data, "bert-base-uncased", "vocab.txt")
    if not os.path.isfile(vocab):
        print(f"SKIPPED: no shared data at {data}")
        return 0
    binary = os.environ.get("MTBERT_BINARY")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit(f"FAILED: MTBERT_BINARY ({binary!r}) is not an executable")

    sst = [row[0] for row in read_tsv_column(os.path.join(data, "ids-sst-train.csv"), ["sentence"])]
    quora = read_tsv_column(os.path.join(data, "quora-dev-split-dev.csv"), ["sentence1", "sentence2"])
    stress = stress_texts()
    code_points, excluded, utf8proc_unicode = code_point_texts()

    failed = 0
    failed += compare("SST train sentences, uncased", binary, vocab, True, sst)
    failed += compare("SST train sentences, cased", binary, vocab, False, sst)
    failed += compare("Quora dev pairs, max_length 128", binary, vocab, True, quora, pairs=True, max_length=128)
    failed += compare("Unicode stress set, uncased", binary, vocab, True, stress)
    failed += compare("Unicode stress set, cased", binary, vocab, False, stress)
    failed += compare("single code points, uncased", binary, vocab, True, code_points)
    failed += compare("single code points, cased", binary, vocab, False, code_points)
    print(f"({excluded} code points left out where Unicode {unicodedata.unidata_version} (Python) and "
          f"{utf8proc_unicode} (utf8proc) disagree)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
