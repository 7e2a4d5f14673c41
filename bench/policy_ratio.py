"""mixed_bfloat16 against float32 on Tenfold's own steps (issue 16's ratio), side by side.

For each model, rounds alternate the two policies; each run is `tenfold-bench-train` on 2
local replicas (global batch 512) and reports its best window; the ratio is of the medians
over rounds. The machine is noisy: compare within one run of this script.

    python3 bench/policy_ratio.py --models recipe_cnn,lenet5 [--rounds 3] [--tenfold-bench build/tenfold-bench-train]
"""
import argparse
import json
import os
import statistics
import subprocess

POLICIES = ("float32", "mixed_bfloat16")


def best_samples_per_second(bench, model, policy):
    command = [bench, "--model", f"bench/zoo/{model}.json", "--devices", "2", "--steps", "10", "--repeats", "3",
               "--warmup", "2", "--dtype-policy", policy]
    result = subprocess.run(command, capture_output=True, text=True, check=True,
                            env={**os.environ, "OMP_NUM_THREADS": "2"})
    return json.loads(result.stdout.strip().splitlines()[-1])["best_samples_per_second"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", required=True, help="comma-separated names in bench/zoo")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tenfold-bench", default="build/tenfold-bench-train")
    args = parser.parse_args()
    for model in args.models.split(","):
        rates = {policy: [] for policy in POLICIES}
        for _ in range(args.rounds):
            for policy in POLICIES:
                rates[policy].append(best_samples_per_second(args.tenfold_bench, model, policy))
        float32, mixed = (statistics.median(rates[policy]) for policy in POLICIES)
        runs = ", ".join(f"{policy} {' '.join(f'{rate:.0f}' for rate in rates[policy])}" for policy in POLICIES)
        print(f"{model:16s} float32 {float32:9.0f}  mixed_bfloat16 {mixed:9.0f}  ratio {mixed / float32:.2f}  ({runs})",
              flush=True)


if __name__ == "__main__":
    main()
