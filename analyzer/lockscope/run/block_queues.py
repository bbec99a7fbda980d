"""What the host says of a block device's request queue (/sys/block/DEV/queue, mq/,
device/): the I/O scheduler, nr_requests, the driver's tags and queue depth, writeback
throttling; and which whole disk a device number (a partition's) is on. Read-only; a
value the host does not show is None."""

from __future__ import annotations

from pathlib import Path

SYS_DEV = Path("/sys/dev/block")


def disk_of(dev: str, sys_dev: Path = SYS_DEV) -> str:
    """The whole disk a device number is on ("259:1" -> "259:0"); dev itself when it is a
    disk or unknown. The block layer's requests name the disk (disk_devt()), a
    filesystem's st_dev its partition."""
    node = sys_dev / dev
    try:
        if (node / "partition").exists():
            return (node.resolve().parent / "dev").read_text().strip()
    except OSError:
        pass
    return dev


def _int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _scheduler(path: Path) -> str | None:
    """The one in brackets: "none [mq-deadline] kyber" -> "mq-deadline"."""
    try:
        text = path.read_text()
    except OSError:
        return None
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else text.strip() or None


def queue_facts(dev: str, sys_dev: Path = SYS_DEV) -> dict:
    """name, scheduler, nr_requests, hw_tags (the largest hardware queue's), queue_depth
    (SCSI's device/queue_depth), wbt_lat_usec of the disk ``dev``."""
    node = sys_dev / dev
    try:
        name = node.resolve().name
    except OSError:
        name = None
    tags = [t for q in sorted((node / "mq").glob("*")) if (t := _int(q / "nr_tags")) is not None]
    return {"name": name if node.exists() else None,
            "scheduler": _scheduler(node / "queue" / "scheduler"),
            "nr_requests": _int(node / "queue" / "nr_requests"),
            "hw_tags": max(tags) if tags else None,
            "queue_depth": _int(node / "device" / "queue_depth"),
            "wbt_lat_usec": _int(node / "queue" / "wbt_lat_usec")}
