#!/usr/bin/env python3
"""Converts a HuggingFace model folder into an mtbert model folder.

    convert_hf_checkpoint.py --hf HF_DIR --out MODEL_DIR [--dtype float32|keep] [--force]

HF_DIR holds config.json and model.safetensors or pytorch_model.bin (or a sharded
*.index.json variant), in the modern naming or the original bert-base-uncased one.
Supported model types: "bert" (BERT) and "deberta-v2" (DeBERTa-v2 and -v3, e.g.
microsoft/deberta-v3-base).
MODEL_DIR receives:
  config.json             the HF config, keys unchanged, HF defaults made explicit,
                          plus "mtbert_format"
  model.safetensors       the weights under canonical names, float32 unless --dtype keep
  vocab.txt / spm.model   copied when present, with tokenizer_config.json stating
                          do_lower_case

Canonical names (scripts/mtbert_py/hf_checkpoint.py):
  BERT      HF BertModel's own state-dict names; `bert.` prefix stripped,
            LayerNorm gamma/beta -> weight/bias. The masked-LM head is kept
            under BertForMaskedLM's names (cls.predictions.transform.*,
            cls.predictions.bias) without its decoder, which must equal the word
            embeddings (tied); the next-sentence head is skipped.
  DeBERTa   BERT's names wherever DeBERTa has the same structure, so that BERT
            and DeBERTa checkpoints load into the same modules:
              deberta.embeddings.{word,position,token_type}_embeddings.weight,
                embed_proj.weight, LayerNorm.*      -> embeddings.* (same names)
              deberta.encoder.layer.{i}.attention.self.query_proj.*  -> ...self.query.*
                                                     key_proj.*    -> ...self.key.*
                                                     value_proj.*  -> ...self.value.*
                                                     pos_key_proj.*, pos_query_proj.* (same)
              deberta.encoder.layer.{i}.attention.output.*, intermediate.*, output.* (same)
              deberta.encoder.rel_embeddings.weight, deberta.encoder.LayerNorm.* (same,
                without the prefix)
            the masked-LM head in HF's legacy layout (cls.predictions.*), as for
            BERT; skipped: lm_predictions.* (microsoft/DeBERTa's masked-LM
            layout), mask_predictions.* (replaced-token-detection head),
            pooler.* and classifier.* (task heads), embeddings.position_ids, and
            embeddings.position_embeddings.weight when position_biased_input is
            false (HF does not use it either).
User mistakes print one line `convert_hf_checkpoint: error: ...` and exit with code 2.
"""
import sys
from pathlib import Path

import torch

from mtbert_py.common import (ArgumentParser, UserError, check_writable_target, read_json, run_main,
                              write_folder_atomically, write_json)
from mtbert_py.hf_checkpoint import (architecture_for, check_tensors, find_tokenizer, load_hf_weights, map_names,
                                     with_defaults)
from mtbert_py.safetensors_io import write_safetensors

PROG = "convert_hf_checkpoint"
# Version of the model-folder layout the C++ loader checks ("mtbert_format").
MTBERT_FORMAT = 1
CONVERTER_VERSION = "1"


def parse_args(argv):
    parser = ArgumentParser(prog=PROG, description="Convert a HuggingFace checkpoint folder "
                                            "into an mtbert model folder.")
    parser.add_argument("--hf", required=True, type=Path, metavar="HF_DIR", help="HuggingFace model folder")
    parser.add_argument("--out", required=True, type=Path, metavar="MODEL_DIR", help="model folder to write")
    parser.add_argument("--dtype", choices=("float32", "keep"), default="float32",
                        help="float32 (default) or keep the source's floating dtypes (F16/BF16)")
    parser.add_argument("--force", action="store_true", help="replace an existing --out folder")
    return parser.parse_args(argv)


def convert(args):
    hf_dir, out_dir = args.hf, args.out
    if not hf_dir.is_dir():
        raise UserError(f"{hf_dir} is not a folder")
    if out_dir.resolve() == hf_dir.resolve():
        raise UserError("--out must differ from --hf")
    check_writable_target(out_dir, args.force)
    config_path = hf_dir / "config.json"
    if not config_path.is_file():
        raise UserError(f"no config.json in {hf_dir}")
    config = read_json(config_path)
    if not isinstance(config, dict):
        raise UserError(f"{config_path} is not a JSON object")
    architecture = architecture_for(config)
    config, defaulted = with_defaults(config, architecture)
    config["mtbert_format"] = MTBERT_FORMAT
    tokenizer = find_tokenizer(hf_dir)

    source = load_hf_weights(hf_dir)
    mapping = map_names(architecture.model_type, source.tensors)
    unused = architecture.unused_tensors(config)
    for name, target in list(mapping.canonical.items()):
        if target in unused:
            del mapping.canonical[name]
            mapping.skipped.append((name, unused[target]))
    tensors = {target: source.tensors[name] for name, target in mapping.canonical.items()}
    _check_tied_decoder(source.tensors, mapping, tensors)
    groups = check_tensors(architecture, config, tensors,
                           {target: name for name, target in mapping.canonical.items()})
    tensors = _in_canonical_order(architecture, config, tensors, args.dtype)

    def fill(folder):
        write_json(folder / "config.json", config)
        write_safetensors(folder / "model.safetensors", tensors, metadata={
            "format": "pt",
            "source": ", ".join(source.files),
            "converter": f"mtbert {PROG} {CONVERTER_VERSION}",
        })
        if tokenizer:
            tokenizer.write(folder)

    write_folder_atomically(out_dir, fill, force=args.force)
    _print_summary(source, mapping, tensors, architecture, config, groups, defaulted,
                   tokenizer, out_dir)


def _check_tied_decoder(source_tensors, mapping, tensors):
    """The masked-LM decoder is dropped because HF ties it to the word
    embeddings; a checkpoint whose decoder differs would lose weights."""
    embeddings = tensors.get("embeddings.word_embeddings.weight")
    for name, why in mapping.skipped:
        if not name.endswith("cls.predictions.decoder.weight"):
            continue
        if embeddings is None or not torch.equal(source_tensors[name].to(embeddings.dtype), embeddings):
            raise UserError(f"{name} differs from the word embeddings: mtbert ties the masked-LM decoder "
                            "to them and cannot keep an untied one")


def _in_canonical_order(architecture, config, tensors, dtype):
    """Orders the tensors as the architecture lists them (embeddings, layers,
    pooler) so the file reads naturally, cast and contiguous."""
    order = list(architecture.tensor_shapes(config))
    for shapes in architecture.optional_groups(config).values():
        order += list(shapes)
    result = {}
    for name in order:
        if name in tensors:
            tensor = tensors[name]
            if dtype == "float32":
                tensor = tensor.to(torch.float32)
            result[name] = tensor.contiguous()
    return result


def _print_summary(source, mapping, tensors, architecture, config, groups, defaulted,
                   tokenizer, out_dir):
    print(f"read {len(source.tensors)} tensors from {', '.join(source.files)} ({source.kind})")
    for ignored in source.ignored:
        print(f"  ignored {ignored} (used {source.files[0]})")
    print(f"skipped {len(mapping.skipped)} tensors" + (":" if mapping.skipped else ""))
    for name, why in mapping.skipped:
        print(f"  skipped {name} ({why})")
    print(f"renamed {mapping.renamed_count} tensors to canonical names")
    for group, shapes in architecture.optional_groups(config).items():
        if group not in groups:
            print(f"note: the source has no {group} ({', '.join(shapes)}); "
                  "the model folder has none either")
    if defaulted:
        print(f"config.json: added HF defaults for {', '.join(defaulted)}")
    dtypes = sorted({str(t.dtype).replace("torch.", "") for t in tensors.values()})
    parameters = sum(t.numel() for t in tensors.values())
    print(f"wrote {len(tensors)} tensors, {parameters:,} parameters ({', '.join(dtypes)}) "
          f"to {out_dir / 'model.safetensors'}")
    print(f"tokenizer: {tokenizer.describe()}" if tokenizer else "tokenizer: none in the source")


def main(argv=None):
    return run_main(PROG, lambda: convert(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
