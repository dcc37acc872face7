"""TFRecord files of tf.train.SequenceExample, as the datasets we write hold
them (harvest-logs --tfrecord, training-log to-tfrecord), without TensorFlow."""

import os
from typing import Dict, List, Union

import numpy as np

from . import _native


def read_tfrecord(path: "os.PathLike[str] | str") -> List[Dict[str, Union[np.ndarray, List[np.ndarray]]]]:
    """Every record's feature lists: {key: array}.

    A list whose steps all hold the same number of values is one array of
    shape (steps, values) (int64 or float32); a ragged list is a list of one
    array per step. A bytes_list (ml-compiler-opt's module_name) is a list
    of one list of bytes per step. Both CRCs of every record are checked; a
    malformed file raises MlgoError naming the record.
    """
    records = []
    for lists in _native.read_tfrecord(os.fspath(path)):
        record = {}
        for key, values, steps in lists:
            if isinstance(values, list):
                ends = np.cumsum(steps)
                record[key] = [values[end - size:end] for end, size in zip(ends, steps)]
            elif len(steps) and np.all(steps == steps[0]):
                record[key] = values.reshape(len(steps), int(steps[0]))
            elif len(steps) == 0:
                record[key] = values.reshape(0, 0)
            else:
                record[key] = np.split(values, np.cumsum(steps)[:-1])
        records.append(record)
    return records
