"""Carries a HuggingFace folder's tokenizer into a model folder.

The C++ tokenizer reads `vocab.txt` (WordPiece) or `spm.model` (SentencePiece)
and takes `do_lower_case` from `tokenizer_config.json`. HF folders do not
always state it (the original bert-base-uncased does not), so it is resolved
here once and written out explicitly.
"""
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .json_files import read_json, write_json

TOKENIZER_MODELS = ("vocab.txt", "spm.model")

# Specials such as [CLS] or [unused0] are spelt the same in cased and uncased vocabularies.
_BRACKETED_SPECIAL = re.compile(r"^\[[^\]]*\]$")
_UPPER_ASCII = re.compile(r"[A-Z]")


@dataclass(frozen=True)
class TokenizerFiles:
    source_dir: Path
    models: tuple        # the tokenizer model files present, e.g. ("vocab.txt",)
    do_lower_case: bool
    reason: str          # where do_lower_case came from

    def describe(self):
        return (f"{', '.join(self.models)} copied, "
                f"do_lower_case={str(self.do_lower_case).lower()} ({self.reason})")

    def write(self, out_dir):
        for name in self.models:
            shutil.copyfile(self.source_dir / name, Path(out_dir) / name)
        write_json(Path(out_dir) / "tokenizer_config.json", {"do_lower_case": self.do_lower_case})


def find_tokenizer(hf_dir):
    """The tokenizer files of a HF folder, or None when it has none. Reads and
    checks everything up front so that writing cannot fail on bad input."""
    hf_dir = Path(hf_dir)
    models = tuple(name for name in TOKENIZER_MODELS if (hf_dir / name).is_file())
    if not models:
        return None
    lower, reason = resolve_do_lower_case(hf_dir)
    return TokenizerFiles(source_dir=hf_dir, models=models, do_lower_case=lower, reason=reason)


def resolve_do_lower_case(hf_dir):
    """(do_lower_case, where the answer came from)."""
    config_path = Path(hf_dir) / "tokenizer_config.json"
    if config_path.is_file():
        config = read_json(config_path)
        value = config.get("do_lower_case") if isinstance(config, dict) else None
        if isinstance(value, bool):
            return value, "from tokenizer_config.json"
        if value is not None:
            raise UserError(f"{config_path}: do_lower_case must be true or false, got {value!r}")
    vocab_path = Path(hf_dir) / "vocab.txt"
    if vocab_path.is_file():
        cased = next((token for token in read_vocab(vocab_path) if is_cased_token(token)), None)
        if cased is None:
            return True, "no uppercase token in vocab.txt"
        return False, f"vocab.txt has uppercase tokens such as {cased!r}"
    # SentencePiece models (DeBERTa-v3 and the like) keep case unless told otherwise.
    return False, "SentencePiece model without a tokenizer_config.json"


def is_cased_token(token):
    return bool(_UPPER_ASCII.search(token)) and not _BRACKETED_SPECIAL.match(token)


def read_vocab(path):
    try:
        # Split on "\n" only, as vocabularies are written: str.splitlines would also
        # split inside tokens that contain Unicode line separators.
        return Path(path).read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise UserError(f"{path} is not UTF-8 text: {e.reason} at byte {e.start}") from None
