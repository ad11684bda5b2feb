"""Confusion matrix of class predictions."""
import numpy as np


def confusion_matrix(gold, predicted, num_classes):
    """counts[g, p]: the examples of gold class g predicted as class p. Labels
    are rounded to the nearest integer (prediction files spell Quora's classes
    "0.0" / "1.0"); one outside 0..num_classes-1 is a ValueError."""
    gold = np.rint(np.asarray(gold, dtype=np.float64)).astype(np.int64)
    predicted = np.rint(np.asarray(predicted, dtype=np.float64)).astype(np.int64)
    if gold.shape != predicted.shape:
        raise ValueError(f"{gold.size} gold labels for {predicted.size} predictions")
    for name, labels in (("gold label", gold), ("prediction", predicted)):
        bad = labels[(labels < 0) | (labels >= num_classes)]
        if bad.size:
            raise ValueError(f"{name} {bad[0]} is not a class index 0..{num_classes - 1}")
    counts = np.zeros((num_classes, num_classes), dtype=np.int64)
    np.add.at(counts, (gold, predicted), 1)
    return counts
