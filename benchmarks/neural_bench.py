"""Benchmark: InfoLM and BERTScore, ours (per unique text, batched) vs torchmetrics one pair at a time.

    python benchmarks/neural_bench.py [--config tiny|base] [--docs 10] [--subset-pairs 4] [--device auto]
                                      [--dtype float32] [--batch-size 64] [--measures infolm,bertscore]
                                      [--compat-texts 60] [--batch-tokens N] [--parity-docs N]
                                      [--end-to-end-only] [--shard i/N] [--processes N]

Timing needs no trained weights: the models are randomly initialised BERT configurations (``tiny``: 2 layers,
hidden 128, the shape of google/bert_uncased_L-2_H-128_A-2; ``base``: 12 layers, hidden 768) with a generated
30,522-entry WordPiece vocabulary, so every generated word is one token. The corpus is PENS-shaped: 10 systems
(5 personalized, 5 generic), ~4 readers per document, headline-length summaries (10-14 tokens) and bodies cut to
the model's max length (512 tokens).

Prints, per measure: texts/s (and masked sequences/s for InfoLM) for the cold encoding of every unique text, the
end-to-end wall time of a full PerSEval run (10 systems, cold cache), and the one-pair-at-a-time torchmetrics
pattern (``torchmetrics.functional.text.infolm(preds=[a], target=[b], ...)`` per pair, as the authors ran it)
against ours on the pairs of the first document. torchmetrics pads every text to ``max_length`` and re-runs the
model for both texts of every pair, so its cost per pair is the same for every pair: it is timed on
``--subset-pairs`` pairs sampled from that document (documents and summaries alike) and scaled to all of the
document's pairs; the numbers of the sampled pairs are compared with ours. ``--compat authors`` InfoLM (which runs
torchmetrics' own shapes on one thread, to equal it bit for bit) is timed against the batched path on
``--compat-texts`` texts and checked against torchmetrics one pair at a time. On a GPU it also prints the GPU
utilisation (sampled with nvidia-smi) and the fraction of the card's peak bf16 throughput the InfoLM encoder
reached (model FLOPs / time / peak), and the GPU memory high-water mark. ``--parity-docs N``: CPU float32 vs GPU
float32 and bf16 distances on N documents' pairs, and PerSEval on the whole corpus (largest difference, ranking
changes). ``--end-to-end-only``: one ``run_scores`` call with every measure (``--docs 3840`` is PENS-size);
``--shard i/N`` keeps documents i, i+N, ...; ``--processes N`` runs N shards at once on this machine's card.
``benchmarks/gpu_figures.sh`` runs the GPU figures of docs/guide/gpus.md. Not run by the tests (``make bench-neural``).
"""
from __future__ import annotations

import argparse
import itertools
import math
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.core.io.corpus import Corpus, Document  # noqa: E402
from metaeval.core.measures.cache import DistanceCache  # noqa: E402
from metaeval.core.measures.distances import plan_corpus  # noqa: E402
from metaeval.core.perseval.measure import Params  # noqa: E402
from metaeval.core.perseval.pipeline import RunOptions, run_scores  # noqa: E402

PERSONALIZED = [f"pers_{i}" for i in range(5)]
GENERIC = [f"generic_{i}" for i in range(5)]
VOCAB_SIZE = 30522
CONFIGS = {
    "tiny": {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 512},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
}
#: dense bf16 tensor-core peak, TFLOP/s (vendor data sheets, without sparsity)
PEAK_BF16_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0}


def make_vocabulary(seed: int = 7) -> list[str]:
    """[PAD] [UNK] [CLS] [SEP] [MASK], then generated lowercase words, no duplicates, VOCAB_SIZE entries."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words: dict[str, None] = {}
    while len(words) < VOCAB_SIZE - len(special):
        words["".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))] = None
    return special + list(words)


def build_models(folder: Path, config_name: str, seed: int = 0) -> tuple[Path, Path, list[str]]:
    """Random-weight BertForMaskedLM (InfoLM) and BertModel (BERTScore) with our vocabulary, saved offline."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertModel, BertTokenizerFast

    vocab = make_vocabulary()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=True, model_max_length=512)
    config = BertConfig(vocab_size=len(vocab), max_position_embeddings=512, **CONFIGS[config_name])
    torch.manual_seed(seed)
    paths = []
    for name, cls in (("mlm", BertForMaskedLM), ("encoder", BertModel)):
        path = folder / name
        cls(config).eval().save_pretrained(path)
        tokenizer.save_pretrained(path)
        paths.append(path)
    return paths[0], paths[1], vocab[5:]


def model_folder() -> tempfile.TemporaryDirectory:
    """A temporary folder with no "t5" in its path: bert-score loads a model whose name contains "t5" as a T5
    encoder (it happened once here, with a random folder name)."""
    while True:
        folder = tempfile.TemporaryDirectory(prefix="neural-bench-")
        if "t5" not in folder.name.lower():
            return folder
        folder.cleanup()


def make_corpus(words: list[str], docs: int, seed: int = 2026) -> Corpus:
    rng = random.Random(seed)
    weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(words))]
    cumulative = list(itertools.accumulate(weights))  # what choices(weights=) builds on every call: same texts

    def text(n: int) -> str:
        return " ".join(rng.choices(words, cum_weights=cumulative, k=n))

    documents = []
    for index in range(docs):
        body = text(rng.randint(520, 700))  # more than 512 tokens: cut to the model's max length
        readers = list(dict.fromkeys(f"U{rng.randint(1, 5000)}" for _ in range(rng.choice([3, 4, 4, 4, 5]))))
        generic = {name: text(rng.randint(10, 14)) for name in GENERIC}
        summaries = {}
        for reader in readers:
            entry = {"user": text(rng.randint(10, 14))}
            entry.update({name: text(rng.randint(10, 14)) for name in PERSONALIZED})
            entry.update(generic)
            summaries[reader] = entry
        documents.append(Document(f"N{index}", text(rng.randint(10, 14)), body, summaries))
    return Corpus(tuple(documents), tuple(PERSONALIZED + GENERIC), source="generated")


class GpuSampler:
    """Samples GPU utilisation (%) with nvidia-smi every 0.2 s while running."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", "0"],
                    capture_output=True, text=True, timeout=5,
                ).stdout.strip()
                self.samples.append(float(out.splitlines()[0]))
            except (OSError, ValueError, IndexError, subprocess.SubprocessError):
                return
            self._stop.wait(0.2)

    def __enter__(self) -> GpuSampler:
        if shutil.which("nvidia-smi"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def summary(self) -> str:
        if not self.samples:
            return "n/a"
        mean = sum(self.samples) / len(self.samples)
        return f"mean {mean:.0f}%, max {max(self.samples):.0f}% ({len(self.samples)} samples)"


def infolm_flops(measure: object, texts: list[str]) -> float:
    """Model FLOPs of InfoLM's encoding of ``texts``: per masked copy of length L, the encoder (2 * L * matmul
    weights per layer + 4 * L^2 * H attention per layer) plus the MLM head at the one masked position."""
    config = measure.model.config  # type: ignore[attr-defined]
    h, layers, inter, vocab = config.hidden_size, config.num_hidden_layers, config.intermediate_size, config.vocab_size
    per_token_layer = 2 * (4 * h * h + 2 * h * inter)
    total = 0.0
    for ids in measure.tokenize(texts):  # type: ignore[attr-defined]
        length = len(ids)
        copies = max(0, length - 2)
        total += copies * layers * (length * per_token_layer + 4 * length * length * h)
        total += copies * 2 * (h * h + h * vocab)
    return total


def peak_tflops(device_name: str, override: float | None) -> float | None:
    if override:
        return override
    for key in sorted(PEAK_BF16_TFLOPS, key=len, reverse=True):
        if key in device_name:
            return PEAK_BF16_TFLOPS[key]
    return None


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def bench_measure(name: str, args: argparse.Namespace, model: Path, corpus: Corpus, device: str) -> None:
    from metaeval.core.measures.registry import get_measure

    options = measure_options(name, args, model, device)
    plan = plan_corpus(corpus, None)
    pairs = plan.text_pairs()
    texts = sorted({text for pair in pairs for text in pair})
    measure = get_measure(name, options=options)
    measure.prepare()
    warm = time.perf_counter()
    # warm-up (kernels, allocator, and the compiled step's graph, built once per measure): not counted
    measure.vectors([*texts[:8], max(texts, key=len)])
    print(f"   warm-up (9 texts; compiling when the fused step is on): {time.perf_counter() - warm:.1f} s")
    for key in ("texts_encoded", "model_seconds", "vector_write_seconds", "vector_bytes"):
        measure.stats[key] = 0  # type: ignore[attr-defined]
    vector_cache = DistanceCache(tempfile.mkdtemp(prefix="neural-bench-"))
    measure.attach_cache(vector_cache)  # type: ignore[attr-defined]
    print(f"\n== {name}: {measure.describe()}")
    print(f"   {len(corpus.documents)} documents, {len(texts)} unique texts, {len(pairs)} unique pairs")
    if device.startswith("cuda"):
        import torch

        torch.cuda.reset_peak_memory_stats()
    with GpuSampler() as sampler:
        synchronize(device)
        started = time.perf_counter()
        measure.vectors(texts)
        synchronize(device)
        encode = time.perf_counter() - started
    line = f"   encoding: {encode:.2f} s = {len(texts) / encode:.1f} texts/s"
    if name == "infolm":
        line = (f"   step: {'compiled (torch.compile)' if measure.stats.get('compiled') else 'eager'}"  # type: ignore[attr-defined]
                + (f", COMPILE FAILED: {measure._compile_error}" if measure.stats.get('compile_failed') else "")  # type: ignore[attr-defined]
                + "\n" + line)
    if name == "infolm":
        copies = sum(max(0, len(ids) - 2) for ids in measure.tokenize(texts))
        flops = infolm_flops(measure, texts)
        line += f", {copies / encode:.0f} masked sequences/s, {flops / encode / 1e12:.2f} TFLOP/s"
    print(line)
    if device.startswith("cuda"):
        import torch

        device_name = torch.cuda.get_device_name(0)
        print(f"   GPU {device_name}: utilisation {sampler.summary()}, memory high-water "
              f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB allocated")
        if name == "infolm":
            peak = peak_tflops(device_name, args.peak_tflops)
            if peak:
                print(f"   fraction of peak dense bf16 ({peak:.0f} TFLOP/s): {flops / encode / 1e12 / peak:.1%}")
    started = time.perf_counter()
    measure.distances(pairs)
    seconds = time.perf_counter() - started
    print(f"   pair distances from the cached per-text vectors: {seconds:.2f} s ({len(pairs) / seconds:.0f} pairs/s)")
    vector_cache.close()
    shutil.rmtree(vector_cache.directory, ignore_errors=True)
    with tempfile.TemporaryDirectory() as cache_dir, DistanceCache(cache_dir) as cache:
        run_options = RunOptions(measures=[name], params=Params(beta=1.7), measure_options={name: options})
        started = time.perf_counter()
        result = run_scores(corpus, run_options, cache=cache)
        end_to_end = time.perf_counter() - started
    print(f"   end to end, 10 systems, cold cache: {end_to_end:.2f} s "
          f"(distances {result.timings.get('distances:' + name, math.nan):.2f} s)")
    if name == "infolm" and args.subset_pairs > 0:
        one_pair_at_a_time(args, model, corpus, device, options)
    if name == "infolm" and args.compat_texts > 0:
        compat_infolm(args, model, corpus, device)
    if name == "bertscore" and args.subset_pairs > 0:
        bert_score_one_pair_at_a_time(model, corpus, device, options, measure.layer)  # type: ignore[attr-defined]


def measure_options(name: str, args: argparse.Namespace, model: Path, device: str, **override: object) -> dict:
    options: dict[str, object] = {
        "model": str(model), "device": device, "dtype": args.dtype, "batch_size": args.batch_size,
    }
    if args.batch_tokens:
        options["batch_tokens"] = args.batch_tokens
    if args.recheck:
        options["recheck"] = args.recheck
    if name == "infolm":
        options["max_length"] = args.max_length
        if args.compile:
            options["compile"] = args.compile
    options.update(override)
    return options


def end_to_end(args: argparse.Namespace, models: dict[str, Path], corpus: Corpus, device: str) -> None:
    """One run_scores call with every measure of ``--measures`` together, cold cache, as a user runs it."""
    names = [part.strip() for part in args.measures.split(",") if part.strip()]
    texts = {text for pair in plan_corpus(corpus, None).text_pairs() for text in pair}
    print(f"\n== end to end: {', '.join(names)} on {len(corpus.documents)} documents, 10 systems, "
          f"{len(texts)} unique texts, dtype {args.dtype}")
    if args.start_at:
        time.sleep(max(0.0, args.start_at - time.time()))
    with tempfile.TemporaryDirectory(prefix="neural-bench-cache-") as cache_dir, DistanceCache(cache_dir) as cache:
        options = RunOptions(
            measures=names, params=Params(beta=1.7),
            measure_options={name: measure_options(name, args, models[name], device) for name in names},
        )
        started_at = time.time()
        started = time.perf_counter()
        restore = watch_progress(args.progress_every, started) if args.progress_every else None
        try:
            with GpuSampler() as sampler:
                result = run_scores(corpus, options, cache=cache, progress=(
                    (lambda event: print(f"   progress {time.perf_counter() - started:.0f} s: {event}"))
                    if args.progress_every else None))
        finally:
            if restore:
                restore()
        seconds = time.perf_counter() - started
        size = sum(f.stat().st_size for f in Path(cache_dir).rglob("*") if f.is_file())
    parts = ", ".join(f"{key} {value:.1f} s" for key, value in sorted(result.timings.items()))
    print(f"   end to end: {seconds:.1f} s ({parts}); distance cache {size / 2**30:.2f} GiB")
    for stat in result.stats:
        extra = ", ".join(f"{key} {value:.6g}" for key, value in sorted(stat.extra.items()))
        print(f"   {stat.measure}: {stat.computed} pairs computed in {stat.compute_seconds:.1f} s; {extra}")
    for check in result.precision.values():
        from metaeval.core.perseval.precision import PrecisionCheck

        print(f"   low precision: {PrecisionCheck(**check).message()} ({check['seconds']:.1f} s)")  # type: ignore[arg-type]
    if device.startswith("cuda"):
        import torch

        print(f"   GPU utilisation during the run: {sampler.summary()}")
        print(f"   GPU memory high-water {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB allocated")
        if "infolm" in names:
            from metaeval.core.measures.registry import get_measure

            counter = get_measure("infolm", options=measure_options("infolm", args, models["infolm"], "cpu"))
            counter.prepare()
            flops = infolm_flops(counter, sorted(texts))
            spent = result.timings.get("distances:infolm", math.nan)
            peak = peak_tflops(torch.cuda.get_device_name(0), args.peak_tflops)
            rate = flops / spent / 1e12
            print(f"   infolm: {flops / 1e15:.1f} PFLOP in {spent:.1f} s (distances, cache and pair sums included) = "
                  f"{rate:.1f} TFLOP/s" + (f" = {rate / peak:.1%} of the {peak:.0f} TFLOP/s dense bf16 peak"
                                            if peak else ""))
    print(f"   window: started {started_at:.1f}, ended {started_at + seconds:.1f} (epoch seconds)")


def parity(args: argparse.Namespace, models: dict[str, Path], corpus: Corpus, device: str) -> None:
    """The same pairs on the CPU in float32, on the GPU in float32 and in ``--dtype`` (bf16): the largest
    differences in distances (on the first ``--parity-docs`` documents), then PerSEval per system on the whole
    corpus on the GPU in float32 and bf16 (and on the CPU where the parity documents are all of them): the largest
    difference and whether any system's rank changes."""
    from metaeval.core.measures.registry import get_measure

    docs = Corpus(corpus.documents[: args.parity_docs], corpus.systems, source="parity documents")
    pairs = plan_corpus(docs, None).text_pairs()
    low = "bfloat16" if args.dtype == "float32" else args.dtype
    settings = [("cpu", "float32"), (device, "float32"), (device, low)]
    names = [part.strip() for part in args.measures.split(",") if part.strip()]
    print(f"\n== parity: {len(docs.documents)} documents, {len(pairs)} unique pairs; CPU float32 vs {device}")
    for name in names:
        values = {}
        for where, dtype in settings:
            measure = get_measure(name, options=measure_options(name, args, models[name], where, dtype=dtype))
            started = time.perf_counter()
            values[(where, dtype)] = measure.distances(pairs)
            print(f"   {name} {where} {dtype}: {time.perf_counter() - started:.1f} s")
        reference = values[("cpu", "float32")]
        for key in settings[1:]:
            diff = abs(values[key] - reference)
            print(f"   {name}: max |{key[0]} {key[1]} - cpu float32| = {diff.max():.3e} "
                  f"(mean {diff.mean():.3e}; distances {reference.min():.4f} .. {reference.max():.4f})")
        scored = {}
        whole = len(docs.documents) == len(corpus.documents)
        for where, dtype in ([("cpu", "float32")] if whole else []) + settings[1:]:
            with tempfile.TemporaryDirectory() as cache_dir, DistanceCache(cache_dir) as cache:
                run_options = RunOptions(
                    measures=[name],
                    params=Params(beta=1.7),
                    measure_options={name: measure_options(name, args, models[name], where, dtype=dtype)},
                )
                scored[(where, dtype)] = run_scores(corpus, run_options, cache=cache).scores()[name]
        base_key = (device, "float32")
        base = scored[base_key]
        order = sorted(base, key=lambda system: -base[system])
        for key, scores in scored.items():
            if key == base_key:
                continue
            diff = max(abs(scores[system] - base[system]) for system in base)
            ranking = sorted(scores, key=lambda system: -scores[system])
            print(
                f"   {name} PerSEval ({len(corpus.documents)} documents): max |{key[0]} {key[1]} - "
                f"{device} float32| = {diff:.3e}; ranking {'unchanged' if ranking == order else 'CHANGED'}"
                + ("" if ranking == order else f" ({order} -> {ranking})")
            )
        print(f"   {name} PerSEval {device} float32: " + ", ".join(f"{s} {base[s]:.6f}" for s in order))


def watch_progress(every: float, started: float) -> Any:
    """Print, at most every ``every`` seconds, how many texts the neural measures have encoded (a run cut by a
    time limit still tells its rate); returns the function that stops it."""
    from metaeval.core.measures.neural import NeuralMeasure

    original = NeuralMeasure.vectors
    last = [started]

    def vectors(self: NeuralMeasure, texts: Sequence[str]) -> list[Any]:
        out = original(self, texts)
        now = time.perf_counter()
        if now - last[0] >= every:
            last[0] = now
            stats = self.stats
            print(f"   progress {now - started:.0f} s: {self.name} {stats['texts_encoded']:.0f} texts encoded, "
                  f"{stats['texts_from_cache']:.0f} from the cache, model {stats['model_seconds']:.0f} s, "
                  f"vector writes {stats['vector_write_seconds']:.0f} s", flush=True)
        return out

    NeuralMeasure.vectors = vectors  # type: ignore[method-assign]

    def restore() -> None:
        NeuralMeasure.vectors = original  # type: ignore[method-assign]

    return restore


def precision_check(args: argparse.Namespace, models: dict[str, Path], corpus: Corpus, device: str) -> None:
    """Per measure: PerSEval in float32, in ``--dtype`` without the check, and in ``--dtype`` with recheck=auto
    (metaeval.core.perseval.precision), each a cold run; the check's measured error against the true largest
    error of the low-precision run, and which orders equal float32's."""
    from metaeval.core.perseval.precision import PrecisionCheck

    names = [part.strip() for part in args.measures.split(",") if part.strip()]
    low = "bfloat16" if args.dtype == "float32" else args.dtype
    print(f"\n== precision check: {len(corpus.documents)} documents, float32 vs {low}")
    for name in names:
        results = {}
        for label, dtype, recheck in (("float32", "float32", "off"), ("low", low, "off"), ("checked", low, "auto")):
            opts = measure_options(name, args, models[name], device, dtype=dtype, recheck=recheck)
            with tempfile.TemporaryDirectory() as cache_dir, DistanceCache(cache_dir) as cache:
                started = time.perf_counter()
                results[label] = run_scores(corpus, RunOptions(measures=[name], params=Params(beta=1.7),
                                                               measure_options={name: opts}), cache=cache)
                print(f"   {name} {label} ({dtype}, recheck {recheck}): {time.perf_counter() - started:.1f} s")
        exact = results["float32"].scores()[name]
        order = sorted(exact, key=lambda system: -exact[system])
        for label in ("low", "checked"):
            scores = results[label].scores()[name]
            diff = max(abs(scores[system] - exact[system]) for system in exact)
            ranking = sorted(scores, key=lambda system: -scores[system])
            print(f"   {name} {label}: max |PerSEval - float32| = {diff:.3e}; order "
                  + ("= float32's" if ranking == order else f"CHANGED {ranking}"))
        check = results["checked"].precision.get(name)
        if check:
            print(f"   {name} check: {PrecisionCheck(**check).message()} ({check['seconds']:.1f} s, "  # type: ignore[arg-type]
                  f"{check['float32_pairs']} float32 pairs)")
        gaps = sorted(exact[a] - exact[b] for a, b in zip(order, order[1:], strict=False))
        print(f"   {name} float32 gaps between neighbours: smallest {gaps[0]:.3e}, median {gaps[len(gaps) // 2]:.3e}; "
              + ", ".join(f"{s} {exact[s]:.6f}" for s in order))


def processes(args: argparse.Namespace) -> None:
    """``--processes N``: N copies of this benchmark at once on the one card, each the end-to-end run of its
    shard of documents (document i goes to shard i mod N), all starting at the same moment once every model is
    built; prints each shard's output and the wall time of the whole window."""
    start_at = time.time() + args.process_start_delay
    argv = [arg for arg in sys.argv[1:]]
    at = argv.index("--processes")
    del argv[at : at + 2]
    children = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                *argv,
                "--shard",
                f"{k}/{args.processes}",
                "--end-to-end-only",
                "--start-at",
                str(start_at),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for k in range(args.processes)
    ]
    outputs = [child.communicate()[0] for child in children]
    ended = []
    for k, output in enumerate(outputs):
        print(f"--- shard {k}/{args.processes}\n{output.strip()}")
        for line in output.splitlines():
            if "window: started" in line:
                ended.append(float(line.rsplit("ended ", 1)[1].split()[0]))
    if len(ended) == args.processes:
        print(
            f"== {args.processes} processes on one card: every shard done {max(ended) - start_at:.1f} s after the "
            f"common start"
        )
    if any(child.returncode for child in children):
        raise SystemExit("a shard failed")


def ours_on_first_document(name: str, corpus: Corpus, device: str, options: dict) -> tuple[list, object, float]:
    """The unique pairs of the first document, our distances for them (fresh measure, no cache) and seconds."""
    from metaeval.core.measures.registry import get_measure

    first = Corpus(corpus.documents[:1], corpus.systems, source="first document")
    pairs = plan_corpus(first, None).text_pairs()
    measure = get_measure(name, options=options)
    measure.prepare()
    synchronize(device)
    started = time.perf_counter()
    ours = measure.distances(pairs)
    synchronize(device)
    return pairs, ours, time.perf_counter() - started


def torchmetrics_infolm(model: Path, a: str, b: str, max_length: int, device: str) -> float:
    """torchmetrics' InfoLM on one pair, as the authors called it (T = 0.25, idf off, alpha = beta = 1)."""
    from torchmetrics.functional.text.infolm import infolm

    return float(infolm([a], [b], model_name_or_path=str(model), temperature=0.25, idf=False, alpha=1.0, beta=1.0,
                        information_measure="ab_divergence", max_length=max_length, device=device, verbose=False))


def one_pair_at_a_time(args: argparse.Namespace, model: Path, corpus: Corpus, device: str, options: dict) -> None:

    pairs, ours, ours_seconds = ours_on_first_document("infolm", corpus, device, options)
    rng = random.Random(1)
    sample = rng.sample(pairs, min(args.subset_pairs, len(pairs)))
    ours_by_pair = dict(zip(pairs, ours.tolist(), strict=True))
    theirs = []
    started = time.perf_counter()
    for a, b in sample:
        theirs.append(torchmetrics_infolm(model, a, b, args.max_length, device))
    synchronize(device)
    per_pair = (time.perf_counter() - started) / len(sample)
    scaled = per_pair * len(pairs)
    diffs = [abs(ours_by_pair[pair] - value) for pair, value in zip(sample, theirs, strict=True)]
    print(f"   one pair at a time (torchmetrics), first document: {len(pairs)} unique pairs")
    print(f"     torchmetrics: {per_pair:.2f} s/pair on {len(sample)} sampled pairs -> {scaled:.1f} s for all")
    print(f"     ours (cold, no cache): {ours_seconds:.2f} s for all -> {scaled / ours_seconds:.0f}x faster")
    print(
        f"     same numbers: max |ours - torchmetrics| = {max(diffs):.2e} over the sampled pairs "
        f"(values {min(theirs):.6f} .. {max(theirs):.6f})"
    )


def compat_infolm(args: argparse.Namespace, model: Path, corpus: Corpus, device: str) -> None:
    """``--compat authors`` InfoLM (torchmetrics' shapes and float32 arithmetic on one CPU thread, max_length 20,
    rounded to 5 dp) against the batched default path at the same max_length, on ``--compat-texts`` unique texts;
    and the first few pairs against torchmetrics one pair at a time (rounded), which must be equal."""

    from metaeval.core.measures.infolm import InfoLM

    texts = sorted({text for pair in plan_corpus(corpus, None).text_pairs() for text in pair})[: args.compat_texts]
    print(f"\n== infolm --compat authors: {len(texts)} unique texts, max_length 20, device {device}")
    for compat in (True, False):
        measure = InfoLM(compat=compat, model=str(model), device=device, max_length=20, batch_size=args.batch_size)
        measure.prepare()
        synchronize(device)
        started = time.perf_counter()
        measure.vectors(texts)
        synchronize(device)
        seconds = time.perf_counter() - started
        label = "compat (torchmetrics' shapes, one thread)" if compat else "default path (batched)   "
        print(f"   {label}: {seconds:.2f} s = {len(texts) / seconds:.1f} texts/s")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pairs = list(zip(texts[: args.subset_pairs], texts[1 : args.subset_pairs + 1], strict=False))
        ours = InfoLM(compat=True, model=str(model), device=device).distances(pairs).tolist()
        theirs = [round(torchmetrics_infolm(model, a, b, 20, device), 5) for a, b in pairs]
    finally:
        torch.set_num_threads(threads)
    equal = sum(x == y for x, y in zip(ours, theirs, strict=True))
    print(f"   round(torchmetrics one pair at a time, 5), one thread: {equal} of {len(pairs)} pairs equal")


def bert_score_one_pair_at_a_time(model: Path, corpus: Corpus, device: str, options: dict, layer: int) -> None:
    """The authors' BERTScore pattern: one scorer (as ``evaluate`` caches it), ``score([a], [b])`` per pair."""
    import bert_score

    pairs, ours, ours_seconds = ours_on_first_document("bertscore", corpus, device, options)
    scorer = bert_score.BERTScorer(model_type=str(model), num_layers=layer, device=device)
    started = time.perf_counter()
    theirs = [1.0 - float(scorer.score([a], [b])[2][0]) for a, b in pairs]
    synchronize(device)
    theirs_seconds = time.perf_counter() - started
    diff = max(abs(x - y) for x, y in zip(ours.tolist(), theirs, strict=True))
    print(f"   one pair at a time (bert-score BERTScorer.score([a], [b])), first document: {len(pairs)} pairs")
    print(
        f"     bert-score: {theirs_seconds:.2f} s; ours (cold, no cache): {ours_seconds:.2f} s "
        f"-> {theirs_seconds / ours_seconds:.0f}x faster; max |ours - bert-score| = {diff:.2e}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--subset-pairs", type=int, default=4, help="torchmetrics pairs timed (0: skip)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--measures", default="infolm,bertscore")
    parser.add_argument(
        "--compat-texts", type=int, default=60, help="unique texts for the --compat authors InfoLM timing (0: skip)"
    )
    parser.add_argument("--peak-tflops", type=float, help="the card's peak bf16 TFLOP/s if not in the table")
    parser.add_argument("--batch-tokens", type=int, help="padded tokens per model batch (default: the measure's)")
    parser.add_argument(
        "--parity-docs",
        type=int,
        default=0,
        help="CPU float32 vs GPU float32 and bf16 on this many documents' pairs (0: skip)",
    )
    parser.add_argument(
        "--end-to-end-only",
        action="store_true",
        help="only one run_scores call with every measure (a PENS-size corpus: --docs 3840)",
    )
    parser.add_argument("--shard", help="i/N: only the documents whose index mod N is i")
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="N end-to-end shards at once on this machine's card (several workers on one GPU)",
    )
    parser.add_argument(
        "--process-start-delay",
        type=float,
        default=60.0,
        help="seconds the --processes shards get to build their models before the common start",
    )
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--recheck", choices=["auto", "flag", "off"], help="the neural measures' recheck option")
    parser.add_argument("--progress-every", type=float, default=0.0,
                        help="--end-to-end-only: a progress line at most every this many seconds (0: none)")
    parser.add_argument("--compile", choices=["auto", "on", "off"], help="InfoLM's compile option")
    parser.add_argument(
        "--precision-check",
        action="store_true",
        help="float32, bf16 without the check and bf16 with recheck=auto on the corpus: the measured error against "
        "the true one, the systems re-checked, and whether each order equals float32's",
    )
    args = parser.parse_args()
    if args.processes:
        processes(args)
        return 0
    import torch

    from metaeval.core.measures.neural import resolve_device

    device = resolve_device(args.device)
    print(
        f"machine: {platform.node()} {platform.machine()}, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}, device {device}"
        + (f" ({torch.cuda.get_device_name(0)})" if device.startswith("cuda") else "")
    )
    with model_folder() as folder:
        mlm, encoder, words = build_models(Path(folder), args.config)
        corpus = make_corpus(words, args.docs)
        if args.shard:
            index, count = (int(part) for part in args.shard.split("/"))
            corpus = Corpus(corpus.documents[index::count], corpus.systems, source=f"shard {args.shard}")
        print(
            f"config {args.config} ({CONFIGS[args.config]}), dtype {args.dtype}, batch size {args.batch_size}, "
            f"batch tokens {args.batch_tokens or 'default'}"
        )
        models = {"infolm": mlm, "bertscore": encoder}
        if args.end_to_end_only:
            end_to_end(args, models, corpus, device)
            return 0
        if args.precision_check:
            precision_check(args, models, corpus, device)
            return 0
        for name in [part.strip() for part in args.measures.split(",") if part.strip()]:
            bench_measure(name, args, models[name], corpus, device)
        if args.parity_docs:
            parity(args, models, corpus, device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
