"""The Spark Load driver: read the source files on Spark, convert and write segment files.

    python -m pipeline.spark_load --job <output_dir>/job.json     (or through spark-submit)

`run_etl(spark, spec)` is the job: Spark reads the files (CSV lines through the text source,
globs and directories allowed; or Parquet), `etl.convert` turns every batch into the table's
rows with `__pb` (partition << 32 | bucket) plus a stats row, Spark shuffles by `__pb` and sorts
within partitions, `etl.write` writes each tablet's segment files and returns manifest rows.
The driver sums them into the manifest (tablets' files, total / filtered / unselected rows,
the first error lines), written atomically as `<output_dir>/manifest.json`. The server
(pipeline/load_manager.py) checks max_filter_ratio, adopts the files and publishes one version.
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
from pipeline.spark_types import spark_ddl

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
                "spark.sql.files.maxPartitionBytes": str(16 << 20)}  # several convert tasks
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


def run_etl(spark, spec: dict) -> dict:
    """Run the ETL of one load; returns the manifest (also written to the output dir)."""
    table = etl.table_of(spec)
    files = spec["files"]
    if spec["format"] == "csv":
        source = spark.read.option("lineSep", spec["line_delimiter"]).text(files)
    elif spec["format"] == "parquet":
        source = spark.read.parquet(*files)
    elif spec["format"] == "orc":
        source = spark.read.orc(*files)
    else:
        raise ValueError(f"format {spec['format']} is not supported by Spark Load")
    columns = [(c.name, c.type) for c in table.columns]
    stats = ", ".join(f"`{n}` {t}" for n, t in (("__total", "BIGINT"), ("__filtered", "BIGINT"),
                                                 ("__unselected", "BIGINT"), ("__errors", "STRING")))
    converted_ddl = f"{spark_ddl(columns)}, `__pb` BIGINT, {stats}"
    converted = source.mapInArrow(etl.convert(spec), converted_ddl)
    tablets = sum(len(p.tablets) for p in table.partitions.values())
    partitions = max(1, min(tablets, int(spec.get("write_parallelism") or 16)))
    shuffled = converted.repartition(partitions, "__pb").sortWithinPartitions("__pb")
    rows = shuffled.mapInArrow(etl.write(spec), etl.MANIFEST_DDL).collect()
    manifest = {"tablets": [], "total": 0, "filtered": 0, "unselected": 0, "errors": []}
    for r in rows:
        if r["kind"] == "tablet":
            manifest["tablets"].append({"tablet_id": r["tablet_id"],
                                        "partition_id": r["partition_id"],
                                        "files": json.loads(r["files"]),
                                        "segment_rows": json.loads(r["segment_rows"]),
                                        "num_rows": r["num_rows"]})
        else:
            for k in ("total", "filtered", "unselected"):
                manifest[k] += r[k] or 0
            if r["errors"]:
                manifest["errors"] += r["errors"].split("\n")
    # Rows loaded as Doris counts them: input rows neither filtered nor unselected (before the
    # model's pre-aggregation folds equal keys).
    manifest["loaded"] = manifest["total"] - manifest["filtered"] - manifest["unselected"]
    _write_atomically(Path(spec["output_dir"]) / "manifest.json", manifest)
    return manifest


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
