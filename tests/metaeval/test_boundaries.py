"""metaeval.core must stay free of Django."""
import subprocess
import sys


def test_core_imports_without_django():
    code = "import sys, metaeval.core; assert 'django' not in sys.modules, sorted(m for m in sys.modules if 'django' in m)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
