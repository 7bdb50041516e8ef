"""What the benchmark ran on: CPU, GPU, commit."""
import ctypes
import json
import os
import platform
import re
import subprocess


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_count():
    """Cores this process may use (affinity and cgroup masks respected)."""
    return len(os.sched_getaffinity(0))


def memory_gib():
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        return round(kib / 2**20, 1)
    except (OSError, ValueError, IndexError):
        return None


def cuda_devices():
    """Names of the CUDA devices the driver API sees, [] without a driver or
    device. Asks libcuda directly, so no framework is imported for it."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return []
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return []
    names = []
    for index in range(count.value):
        device, name = ctypes.c_int(0), ctypes.create_string_buffer(256)
        if cuda.cuDeviceGet(ctypes.byref(device), index) == 0 and \
                cuda.cuDeviceGetName(name, 256, device) == 0:
            names.append(name.value.decode())
    return names


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def cpu_isa():
    """The widest fp32 vector ISA of this CPU: avx512, avx2, sse (x86) or the
    machine's name elsewhere. Recur picks its GEMM tiles by it, so results of
    different classes never share a folder."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        flags = []
    if "avx512f" in flags:
        return "avx512"
    if "avx2" in flags and "fma" in flags:
        return "avx2"
    if flags:
        return "sse"
    return slug(platform.machine() or "unknown")


def machine_slug(gpus):
    """bench/results/<slug>: the GPU's name where there is one, else the CPU
    model, its vector ISA and core count (hostnames say nothing about speed)."""
    if gpus:
        return slug(gpus[0])
    model = re.sub(r"\((r|tm)\)|\bcpu\b|\bprocessor\b|@.*", "", cpu_model(), flags=re.I)
    model = re.sub(r"\b\d+-core\b", "", model, flags=re.I)
    return f"cpu-{slug(model)}-{cpu_isa()}-{cpu_count()}c"


def fma_peak(probe, threads):
    """{"isa", "vector_width", "gflops": fp32 FMA GFLOP/s on `threads` threads,
    "method"} measured by bench-fma-peak, or None without the probe."""
    if not probe or not os.path.exists(probe):
        return None
    try:
        run = subprocess.run([probe, "--threads", str(threads), "--json"],
                             capture_output=True, text=True, check=True, timeout=120)
        data = json.loads(run.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return {"isa": data["isa"], "vector_width": data["vector_width"],
            "gflops": data["gflops"].get(str(threads)),
            "by_threads": data["gflops"],
            "method": "bench-fma-peak: independent vector FMA chains on every thread, "
                      "best of 3"}


def recur_commit(root):
    """Short commit with -dirty for uncommitted changes; RECUR_BENCH_COMMIT
    where the tree is no git checkout (the device bundle sets it)."""
    if os.environ.get("RECUR_BENCH_COMMIT"):
        return os.environ["RECUR_BENCH_COMMIT"]
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git checkout; set RECUR_BENCH_COMMIT)"


def describe(gpus):
    return {"slug": machine_slug(gpus), "cpu": cpu_model(), "isa": cpu_isa(),
            "cores": cpu_count(),
            "memory_gib": memory_gib(), "gpus": gpus,
            "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}
