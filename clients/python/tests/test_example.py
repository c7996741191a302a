"""examples/python-agent runs against the real service, so it cannot rot: conversation 1 and
conversation 2 in two separate processes (nothing shared but the service), and the second
answer carries the fact the first one stored. A user the service knows nothing about gets no
such answer, so the check can fail."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

from memory_runtime import MemoryClient

from .support import OPEN_URL, needs_service, unique

AGENT = Path(__file__).resolve().parents[3] / "examples" / "python-agent" / "agent.py"


def run_agent(*args: str) -> str:
    env = {**os.environ, "MEMORY_RUNTIME_URL": OPEN_URL or ""}
    # No PYTHONPATH: the example finds the client in the clone by itself, as a reader's run would.
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, str(AGENT), *args], env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"agent.py {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


@needs_service
class PythonAgentExample(unittest.TestCase):
    def test_the_second_conversation_recalls_what_the_first_stored(self) -> None:
        user = unique("py-example")
        first = run_agent("--user", user, "--conversation", "1")
        self.assertIn("Noted", first)
        second = run_agent("--user", user, "--conversation", "2")
        answer = second.strip().splitlines()[-1]
        self.assertIn("assistant:", answer)
        self.assertIn("Maya is allergic to peanuts", answer)

        # Both conversations were recorded as episodes of that user, the fact as a semantic memory.
        known = MemoryClient(OPEN_URL).inspect(user)
        self.assertIn("Maya is allergic to peanuts", [m["content"] for m in known["semantic"]])
        self.assertEqual(len({m["episode_id"] for m in known["episodic"]}), 2)

    def test_a_user_nothing_is_known_about_gets_no_such_answer(self) -> None:
        answer = run_agent("--user", unique("py-example-new"), "--conversation", "2").strip().splitlines()[-1]
        self.assertNotIn("peanuts", answer)
        self.assertIn("don't know anything about you", answer)


if __name__ == "__main__":
    unittest.main()
