"""The README's example and the demo run as written."""

import re
import runpy
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_readme_example_runs(capsys):
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md has no python example"
    assert len(blocks[0].strip().splitlines()) <= 10
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert "poptorch.addmm" in capsys.readouterr().out


def test_demo_runs(capsys):
    runpy.run_path(str(REPO / "examples" / "demo.py"), run_name="__main__")
    assert "matches eager PyTorch" in capsys.readouterr().out
