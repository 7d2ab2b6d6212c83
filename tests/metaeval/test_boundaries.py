"""metaeval.core must stay free of Django: every module of the package is imported in a fresh interpreter, which
must end without Django loaded (ARCHITECTURE.md, Boundaries)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: imports every module of a package (walking subpackages) and prints them with the Django modules then loaded
WALK = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [package.__name__]
for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
    importlib.import_module(info.name)
    names.append(info.name)
print(json.dumps({"modules": names, "django": sorted(m for m in sys.modules if m.split(".")[0] == "django")}))
"""


def walk(package: str, *paths: Path) -> dict[str, list[str]]:
    """Import every module of ``package`` in a new interpreter (``paths`` first on sys.path, then the project)."""
    env_path = [str(path) for path in (*paths, ROOT)]
    code = f"import sys; sys.path[:0] = {env_path!r}\n" + WALK
    result = subprocess.run([sys.executable, "-c", code, package], capture_output=True, text=True, cwd=ROOT,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_every_core_module_imports_without_django() -> None:
    found = walk("metaeval.core")
    on_disk = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in (ROOT / "metaeval" / "core").rglob("*.py")
    }
    assert set(found["modules"]) == on_disk  # every file was imported, subpackages included
    assert len(on_disk) > 20
    assert found["django"] == []


def test_the_walk_finds_a_django_import_in_a_submodule(tmp_path: Path) -> None:
    package = tmp_path / "fakecore"
    (package / "measures").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "measures" / "__init__.py").write_text("")
    (package / "measures" / "leaky.py").write_text("from django.conf import settings\n")
    found = walk("fakecore", tmp_path)
    assert "fakecore.measures.leaky" in found["modules"]
    assert "django.conf" in found["django"]
