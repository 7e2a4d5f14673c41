"""The recipe's input pipeline, Tenfold vs tf.data, side by side:
from_tensor_slices((x, y)).shuffle(10000).batch(512).prefetch(AUTOTUNE) over Fashion-MNIST.

    python3 bench/pipeline_throughput.py --tenfold build/tenfold-bench-pipeline

tensorflow-cpu from PyPI (scripts/install-python-references.sh)."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))


def tf_data_samples_per_second(threads):
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf
    from fixture_common import fashion_mnist
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    (x, y), _ = fashion_mnist()
    dataset = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10000, seed=1).batch(512)
               .prefetch(tf.data.AUTOTUNE))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in dataset:
            pass
        best = min(best, time.perf_counter() - start)
    return len(x) / best, tf.__version__


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenfold", default="build/tenfold-bench-pipeline")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    tenfold = json.loads(subprocess.run([args.tenfold], env=env, check=True, capture_output=True,
                                        text=True).stdout.strip().splitlines()[-1])
    tf_rate, tf_version = tf_data_samples_per_second(args.threads)
    print(json.dumps(tenfold, indent=1))
    print(f"\nrecipe pipeline alone, samples/s: tenfold {tenfold['pipeline_samples_per_second']:.0f}, "
          f"tf.data {tf_rate:.0f} (tensorflow {tf_version}); tenfold / tf.data = "
          f"{tenfold['pipeline_samples_per_second'] / tf_rate:.2f}")
    print(f"pipeline / training throughput: {tenfold['pipeline_over_training']:.1f}x; epoch "
          f"overhead with the pipeline: {tenfold['pipeline_epoch_overhead_percent']:.1f}%")
    print(f"AUTOTUNE, a costly map (samples/s): 1 thread {tenfold['map_1_samples_per_second']:.0f}, "
          f"{tenfold['cores']} threads {tenfold['map_per_core_samples_per_second']:.0f}, AUTOTUNE "
          f"{tenfold['map_autotune_samples_per_second']:.0f} with "
          f"{tenfold['map_autotune_threads']} map threads found")


if __name__ == "__main__":
    main()
