"""Compares a system's outputs with the reference's."""
import numpy as np

# |got - want| <= tolerance * (1 + |want|), as recur-run --check; the bounds
# per precision are workloads.TOLERANCES.
# The relative error is reported over elements away from zero only.
REL_FLOOR = 1e-3
CHUNK = 1 << 22


def compare(got, want, tolerance):
    """Compares {name: array} dicts: every name of `want` must be in `got`,
    with its shape. Returns {"pass", "max_abs_error", "max_rel_error",
    "mismatches", "nans", "tolerance"} and "error" when nothing compares."""
    result = {"pass": True, "max_abs_error": 0.0, "max_rel_error": 0.0, "mismatches": 0,
              "nans": 0, "tolerance": tolerance}
    for name, expected in want.items():
        if name not in got:
            return dict(result, **{"pass": False, "error": f"no output '{name}'"})
        actual = got[name]
        if actual.shape != expected.shape:
            return dict(result, **{"pass": False, "error": f"output '{name}' has shape "
                                   f"{list(actual.shape)}, reference {list(expected.shape)}"})
        # Chunks keep the float64 temporaries small for 256 MB logits.
        flat_got, flat_want = actual.reshape(-1), expected.reshape(-1)
        for begin in range(0, flat_want.size, CHUNK):
            a = flat_got[begin:begin + CHUNK].astype(np.float64)
            w = flat_want[begin:begin + CHUNK].astype(np.float64)
            diff = np.abs(a - w)
            bad = ~(diff <= tolerance * (1 + np.abs(w)))  # NaN counts as bad
            result["mismatches"] += int(bad.sum())
            nan = np.isnan(diff)
            result["nans"] += int(nan.sum())
            diff, w = diff[~nan], w[~nan]
            if diff.size:
                result["max_abs_error"] = max(result["max_abs_error"], float(diff.max()))
            away = np.abs(w) >= REL_FLOOR
            if away.any():
                result["max_rel_error"] = max(result["max_rel_error"],
                                              float((diff[away] / np.abs(w[away])).max()))
    result["pass"] = result["mismatches"] == 0
    return result
