"""west.yml with west.manifest.validate, plus pinned revisions and the module allow-list."""

from __future__ import annotations

from pathlib import Path

import yaml

from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, one_file


def check_west(app: Path) -> CheckResult:
    from west.manifest import ImportFlag, MalformedManifest, Manifest, validate

    result, path, name = one_file("west", app, "west.yml")
    if not path.is_file():
        result.fail(name, "missing")
        return result
    text = path.read_text()
    try:
        data = validate(text)
        # Load it too (imports not followed: zephyr is not cloned here): resolves remotes, paths.
        Manifest.from_data(text, import_flags=ImportFlag.IGNORE)
    except (MalformedManifest, yaml.YAMLError) as exc:
        detail = exc.args[-1] if isinstance(exc, MalformedManifest) and exc.args else exc
        result.fail(name, f"west rejects the manifest: {' '.join(str(detail).split())}")
        return result
    projects = {p.get("name"): p for p in data["manifest"].get("projects", [])}
    zephyr = projects.get("zephyr")
    if not zephyr:
        result.fail(name, "no 'zephyr' project")
    else:
        if str(zephyr.get("revision", "main")) in ("main", "master", "HEAD"):
            result.fail(name, "zephyr is not pinned to a release (revision is a branch)")
        imp = zephyr.get("import")
        if not isinstance(imp, dict) or not imp.get("name-allowlist"):
            result.fail(name, "zephyr import has no name-allowlist: west update would fetch every module")
        else:
            for needed in ("cmsis_6", "cmsis-nn"):
                if needed not in imp["name-allowlist"]:
                    result.fail(name, f"module '{needed}' missing from the zephyr name-allowlist")
    et = projects.get("executorch")
    if not et:
        result.fail(name, "no 'executorch' project (the ExecuTorch Zephyr module)")
    elif et.get("path") != "modules/lib/executorch":
        result.fail(name, f"executorch path is {et.get('path')!r}, expected modules/lib/executorch")
    return result
