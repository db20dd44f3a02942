"""The input pipeline's benchmark: Fashion-MNIST's 60,000 training records (TFRecord files of
tf.train.Example, as `troupe data fashion-mnist` writes them) read and parsed into float32
images and int64 labels in batches of 256, by

  - troupe's tf.data pipeline (TFRecordDataset -> batch -> map(parse_example, decode_raw,
    / 255) -> prefetch), fetched by a Python session as a TF1 program would, with the map's
    calls one at a time and two at once (num_parallel_calls=2), and with the files
    interleaved record by record (interleave(TFRecordDataset, cycle_length=files), their
    reads one at a time and at once: num_parallel_calls=2);
  - PyTorch's DataLoader over an IterableDataset that reads the same files and parses each
    record with protobuf's own Example class (python3-protobuf, compiled by protoc from
    test/python/protos/example_records.proto), in one process (num_workers=0) and with one
    worker process (num_workers=1): the two configurations 2 cores allow. The peer skips the
    CRC checks troupe makes (Python has no CRC32C), which favours it.

Prints one line per system and configuration: the median records/s of --reps passes.
  /usr/bin/python3 bench/input_pipeline.py --records_dir=/tmp/fm [--reps=5] [--only=troupe]
(PYTHONPATH must reach the troupe module, e.g. build/python.)"""

import argparse
import glob
import importlib
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

BATCH = 256


def troupe_pass(files, parallel_calls=None, interleave_calls=0):
    import troupe as tf
    tf.reset_default_graph()

    def parse(serialized):
        f = tf.parse_example(serialized, {"image_raw": tf.FixedLenFeature([], tf.string),
                                          "label": tf.FixedLenFeature([], tf.int64)})
        pixels = tf.reshape(tf.decode_raw(f["image_raw"], tf.uint8), [-1, 784])
        return tf.cast(pixels, tf.float32) / 255.0, f["label"]

    if interleave_calls:  # the files interleaved record by record, as sharded inputs are read
        d = tf.data.Dataset.from_tensor_slices(files).interleave(
            tf.data.TFRecordDataset, cycle_length=len(files), block_length=1,
            num_parallel_calls=interleave_calls)
    else:
        d = tf.data.TFRecordDataset(files)
    d = d.batch(BATCH).map(parse, parallel_calls).prefetch(2)
    nxt = d.make_one_shot_iterator().get_next()
    count = 0
    with tf.Session() as sess:
        start = time.perf_counter()
        while True:
            try:
                images, labels = sess.run(nxt)
            except tf.errors.OutOfRangeError:
                break
            count += len(labels)
    return count, time.perf_counter() - start


def example_module():
    out = tempfile.mkdtemp()
    protos = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python",
                          "protos")
    subprocess.run(["protoc", "-I", protos, "--python_out", out,
                    os.path.join(protos, "example_records.proto")], check=True)
    sys.path.insert(0, out)
    return importlib.import_module("example_records_pb2")


def torch_pass(files, workers):
    import torch
    from torch.utils.data import DataLoader, IterableDataset
    pb2 = example_module()

    class Records(IterableDataset):
        def __iter__(self):
            example = pb2.Example()
            for path in files:
                with open(path, "rb") as f:
                    while True:
                        header = f.read(12)
                        if not header:
                            break
                        (length,) = struct.unpack("<Q", header[:8])
                        data = f.read(length)
                        f.read(4)
                        example.ParseFromString(data)
                        feature = example.features.feature
                        image = np.frombuffer(feature["image_raw"].bytes_list.value[0],
                                              dtype=np.uint8).astype(np.float32) / 255.0
                        yield image, feature["label"].int64_list.value[0]

    loader = DataLoader(Records(), batch_size=BATCH, num_workers=workers)
    count = 0
    start = time.perf_counter()
    for images, labels in loader:
        count += len(labels)
    del torch
    return count, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records_dir", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default="", help="run the systems whose name has this")
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.records_dir, "train-*.tfrecord")))
    if not files:
        sys.exit("no train-*.tfrecord in %s (troupe data fashion-mnist --to=%s)"
                 % (args.records_dir, args.records_dir))
    systems = [("troupe tf.data", lambda: troupe_pass(files)),
               ("troupe tf.data, map on 2 calls", lambda: troupe_pass(files, 2)),
               ("troupe tf.data, files interleaved", lambda: troupe_pass(files, None, 1)),
               ("troupe tf.data, files interleaved on 2 calls",
                lambda: troupe_pass(files, None, 2)),
               ("PyTorch DataLoader, num_workers=0", lambda: torch_pass(files, 0)),
               ("PyTorch DataLoader, num_workers=1", lambda: torch_pass(files, 1))]
    systems = [(name, run) for name, run in systems if args.only in name]
    rates = {name: [] for name, _ in systems}
    for _ in range(args.reps):  # in turn: this machine's speed drifts
        for name, run in systems:
            count, seconds = run()
            rates[name].append(count / seconds)
    for name, _ in systems:
        samples = sorted(rates[name])
        print("%-36s median %9.0f records/s  (%s)" % (
            name, statistics.median(samples), ", ".join("%.0f" % s for s in samples)))


if __name__ == "__main__":
    main()
