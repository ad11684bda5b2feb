"""Python helpers shared by mtbert's scripts: checkpoint conversion, test fixtures and run figures.

common          UserError (one line, exit code 2), JSON files, folders written atomically
safetensors_io  the safetensors format, without the `safetensors` package
hf_checkpoint   HuggingFace folders: architectures, tensor names, weights, tokenizer files
tiny_models     tiny random BERT and DeBERTa checkpoints for tests
run_files       what mtbert writes: run folders, predictions beside gold labels, attention maps
figures         training curves, dev prediction figures, attention heatmaps, as PNG files
"""
