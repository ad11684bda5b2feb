"""An independent Python reference for BERT WordPiece tokenization.

Written from the documented semantics of HuggingFace's slow BertTokenizer
(`tokenizer(text, text_pair, truncation=True, max_length=N)`), with Python's
own `unicodedata` and `str.lower()`, to check mtbert's C++ tokenizer (which
uses utf8proc) token for token. It needs nothing but the standard library.

The steps, for a text:
  * the special tokens written in it ([CLS], [SEP], [PAD], [MASK], [UNK],
    case-sensitive) are kept whole; the rest is tokenized piece by piece;
  * with lowercasing, every character is lowercased by itself (so Python's
    final-sigma rule, which needs a word around the sigma, never applies);
  * cleaning drops NUL, U+FFFD and categories C* except tab, newline and
    carriage return, which like category Zs become a plain space;
  * CJK ideographs get a space on each side;
  * NFC, then str.split();
  * per word (unless it is a special token): with lowercasing, lower() once
    more, NFD and drop the Mn marks; then each punctuation character becomes a
    word of its own;
  * WordPiece: longest vocabulary piece first, "##" for continuations, [UNK]
    for a word of more than 100 characters or one that cannot be covered.
"""

import re
import unicodedata

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
MAX_WORD_CHARS = 100

_CJK_BLOCKS = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

# Longest first, so that a longer token wins over a prefix of it.
_SPECIAL_PATTERN = re.compile(
    "(" + "|".join(re.escape(t) for t in sorted(SPECIAL_TOKENS, key=len, reverse=True)) + ")"
)


def read_vocab(path):
    """The pieces of a vocab.txt in id order (Python's universal newlines)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pieces = text.split("\n")
    if pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def is_cjk(ch):
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_BLOCKS)


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def clean(text):
    out = []
    for ch in text:
        if ch in "\t\n\r":
            out.append(" ")
            continue
        category = unicodedata.category(ch)
        if ch == "\x00" or ch == "\ufffd" or category.startswith("C"):
            continue
        out.append(" " if category == "Zs" else ch)
    return "".join(out)


def strip_marks(word):
    return "".join(ch for ch in unicodedata.normalize("NFD", word) if unicodedata.category(ch) != "Mn")


def split_punctuation(word):
    pieces, current = [], ""
    for ch in word:
        if is_punctuation(ch):
            if current:
                pieces.append(current)
            pieces.append(ch)
            current = ""
        else:
            current += ch
    if current:
        pieces.append(current)
    return pieces


class ReferenceBertTokenizer:
    def __init__(self, vocab_path, lower_case=True):
        self.pieces = read_vocab(vocab_path)
        self.ids = {}
        for i, piece in enumerate(self.pieces):
            self.ids[piece] = i
        self.lower_case = lower_case
        self.unk = "[UNK]"

    def basic_words(self, text):
        """The words of a text without special tokens, before WordPiece."""
        if self.lower_case:
            text = "".join(ch.lower() for ch in text)
        text = clean(text)
        text = "".join(" " + ch + " " if is_cjk(ch) else ch for ch in text)
        text = unicodedata.normalize("NFC", text)
        words = []
        for word in text.split():
            if word in SPECIAL_TOKENS:
                words.append(word)
                continue
            if self.lower_case:
                word = strip_marks(word.lower())
            words.extend(split_punctuation(word))
        return words

    def wordpieces(self, word):
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.ids:
                    pieces.append(candidate)
                    start = end
                    break
            else:
                return [self.unk]
        return pieces

    def tokenize(self, text):
        tokens = []
        for i, part in enumerate(_SPECIAL_PATTERN.split(text)):
            if i % 2 == 1:  # re.split puts the captured separators at odd indices
                tokens.append(part)
                continue
            for word in self.basic_words(part):
                tokens.extend(self.wordpieces(word))
        return tokens

    def encode(self, text):
        return [self.ids.get(t, self.ids[self.unk]) for t in self.tokenize(text)]

    def encode_for_model(self, text, pair=None, max_length=0):
        """ids, token_type_ids, attention_mask of [CLS] a [SEP] (b [SEP])."""
        cls, sep = self.ids["[CLS]"], self.ids["[SEP]"]
        a = self.encode(text)
        b = self.encode(pair) if pair is not None else None
        if b is None:
            if max_length and max_length < 2:
                raise ValueError(f"max_length {max_length} cannot hold [CLS] a [SEP]")
            if max_length and len(a) + 2 > max_length:
                a = a[: max_length - 2]
            ids = [cls] + a + [sep]
            types = [0] * len(ids)
        else:
            if max_length:
                if max_length < 3:
                    raise ValueError(f"max_length {max_length} cannot hold [CLS] a [SEP] b [SEP]")
                # longest_first: drop the last token of the longer side, the
                # second one when both are as long, until the pair fits.
                while len(a) + len(b) + 3 > max_length:
                    if len(a) > len(b):
                        a = a[:-1]
                    else:
                        b = b[:-1]
            ids = [cls] + a + [sep] + b + [sep]
            types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        return ids, types, [1] * len(ids)
