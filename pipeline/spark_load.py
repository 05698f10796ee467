"""The Spark Load driver: read the source files on Spark, convert and write segment files.

    python -m pipeline.spark_load --job <output_dir>/job.json     (or through spark-submit)

`run_etl(spark, spec)` is the job, two Spark stages and no shuffle (pipeline/etl.py): the
driver plans input splits (pipeline/splits.py: CSV byte ranges, Parquet row groups; globs and
directories allowed; Spark's own reader for what a task cannot read alone), `etl.convert`
tasks convert, route and bucket their split into a run file ordered by (partition, bucket),
the driver deals the (partition, bucket) groups to `etl.write` tasks, which write each
tablet's segment files and return manifest rows. The driver sums them into the manifest
(tablets' files, total / filtered / unselected rows, the first error lines), written
atomically as `<output_dir>/manifest.json`. The server (pipeline/load_manager.py) checks
max_filter_ratio, adopts the files and publishes one version.
The server runs `run_etl` in a thread on its own SparkSession (`session_for`); the command
line runs it in a separate driver.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pipeline import etl
from pipeline.splits import plan_splits

PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)


def prepare_environment() -> None:
    """Python workers run this interpreter and import the project's packages."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    path = os.environ.get("PYTHONPATH", "")
    if PROJECT_ROOT not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, path) if p)


def session_for(master: str, conf: dict[str, str], app_name: str = "minidoris-spark-load",
                launcher_log: Path | None = None):
    """A SparkSession on `master` with the resource's spark.* properties.

    With `launcher_log`, the JVM (and the Python workers it starts, whose output it relays)
    writes its stdout and stderr there, as Doris keeps log/spark_launcher_log: Spark's own
    messages, e.g. a worker's broken pipe when a job is cancelled, stay out of the server log."""
    prepare_environment()
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession
    settings = {"spark.master": master, "spark.app.name": app_name,
                "spark.ui.enabled": "false",
                "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
                "spark.speculation": "false", "spark.ui.showConsoleProgress": "false",
                "spark.sql.files.maxPartitionBytes": str(16 << 20)}  # Spark's reader: several tasks
    settings.update({k: v for k, v in conf.items()
                     if k.startswith("spark.") and k != "spark.master"})
    if launcher_log is None or SparkContext._active_spark_context is not None:
        builder = SparkSession.builder
        for k, v in settings.items():
            builder = builder.config(k, v)
        return builder.getOrCreate()
    from pyspark.java_gateway import launch_gateway
    spark_conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    launcher_log.parent.mkdir(parents=True, exist_ok=True)
    with open(launcher_log, "ab") as out:  # the JVM keeps its own descriptor
        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": out, "stderr": out})
    return SparkSession(SparkContext(conf=spark_conf, gateway=gateway))


def run_etl(spark, spec: dict, progress=None) -> dict:
    """Run the ETL of one load; returns the manifest (also written to the output dir).
    `progress(fraction)` is called when the conversion stage is done."""
    parallelism = spark.sparkContext.defaultParallelism
    splits = plan_splits(spec, parallelism)
    if splits is not None:
        ids = spark.range(0, len(splits), 1, max(1, len(splits)))
        rows = ids.mapInArrow(etl.convert(spec, splits), etl.RUN_DDL).collect()
    else:
        rows = _spark_source(spark, spec).mapInArrow(etl.convert(spec), etl.RUN_DDL).collect()
    runs, stats = etl.collect_runs([r.asDict() for r in rows])
    if progress is not None:
        progress(0.5)
    manifest = {"tablets": [], "total": stats["total"], "filtered": stats["filtered"],
                "unselected": stats["unselected"], "errors": stats["errors"]}
    tasks = int(spec.get("write_parallelism") or 2 * parallelism)
    assignments = etl.assign(runs, max(1, min(len(runs), tasks)))
    if assignments:
        ids = spark.range(0, len(assignments), 1, len(assignments))
        for r in ids.mapInArrow(etl.write(spec, assignments), etl.MANIFEST_DDL).collect():
            manifest["tablets"].append({"tablet_id": r["tablet_id"],
                                        "partition_id": r["partition_id"],
                                        "files": json.loads(r["files"]),
                                        "segment_rows": json.loads(r["segment_rows"]),
                                        "num_rows": r["num_rows"]})
    # Rows loaded as Doris counts them: input rows neither filtered nor unselected (before the
    # model's pre-aggregation folds equal keys).
    manifest["loaded"] = manifest["total"] - manifest["filtered"] - manifest["unselected"]
    _write_atomically(Path(spec["output_dir"]) / "manifest.json", manifest)
    return manifest


def _spark_source(spark, spec: dict):
    """Spark's own reader, for inputs a task cannot read alone (pipeline/splits.py)."""
    files = spec["files"]
    if spec["format"] == "csv":
        return spark.read.option("lineSep", spec["line_delimiter"]).text(files)
    if spec["format"] == "parquet":
        return spark.read.parquet(*files)
    if spec["format"] == "orc":
        return spark.read.orc(*files)
    raise ValueError(f"format {spec['format']} is not supported by Spark Load")


def _write_atomically(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pipeline.spark_load",
                                     description="Run one Spark Load job's ETL")
    parser.add_argument("--job", required=True, type=Path, help="job.json written by the server")
    args = parser.parse_args(argv)
    spec = json.loads(args.job.read_text())
    spark = session_for(spec["master"], spec.get("spark_conf", {}),
                        f"minidoris-spark-load-{spec['label']}")
    try:
        manifest = run_etl(spark, spec)
    finally:
        spark.stop()
    print(json.dumps({k: manifest[k] for k in ("total", "filtered", "unselected", "loaded")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
