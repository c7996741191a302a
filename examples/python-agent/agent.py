#!/usr/bin/env python3
"""An agent loop with long-term memory, in two conversations.

Conversation 1: the user tells the assistant something worth keeping; the model calls the
``remember`` tool. Conversation 2 (a new process, a new client, nothing carried over but the
memory service): the user asks for a suggestion; the model calls ``recall`` and answers from
what it finds. Each conversation is also recorded as an episode (start_episode / add_message /
end_episode), so the service can extract facts from it and ``recall_grouped`` can show it later.

The model here is a stub (no network, deterministic) with the interface of an LLM with tool
calling: ``complete(messages, tools)`` returns either ``{"tool_calls": [{"name", "arguments"}]}``
or ``{"content": "..."}``; the messages are OpenAI-style ``{"role", "content"}`` dicts (tool
results as ``role: "tool"``) and TOOLS is in the OpenAI ``tools`` format. To use a real model,
write a class with the same ``complete`` that sends ``messages`` and ``tools`` to your chat
completions endpoint and maps its answer back; the loop does not change.

Run against a local service (``npm start`` in the repository):

    python3 examples/python-agent/agent.py                      # both conversations
    python3 examples/python-agent/agent.py --conversation 1     # ...or one at a time
    python3 examples/python-agent/agent.py --conversation 2

MEMORY_RUNTIME_URL / MEMORY_RUNTIME_API_KEY (or --base-url / --api-key) say where the service is.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

try:
    from memory_runtime import MemoryClient
except ImportError:  # run from a clone without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))
    from memory_runtime import MemoryClient

Message = Dict[str, Any]

TOOLS = [
    {"type": "function", "function": {
        "name": "remember",
        "description": "Store one durable fact about the user, to recall in later conversations.",
        "parameters": {"type": "object", "required": ["fact"], "properties": {"fact": {"type": "string"}}},
    }},
    {"type": "function", "function": {
        "name": "recall",
        "description": "Search what is known about the user. Call before answering anything that may depend on it.",
        "parameters": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}},
    }},
]


class StubModel:
    """Deterministic stand-in for an LLM with tool calling. It decides from the last message only:
    a user statement starting "remember that ..." → call remember; a user question → call recall;
    a tool result → answer in words, built only from what the tools returned."""

    def __init__(self, user_name: str) -> None:
        self.user_name = user_name

    def complete(self, messages: List[Message], tools: List[Dict[str, Any]]) -> Message:
        assert {t["function"]["name"] for t in tools} >= {"remember", "recall"}
        last = messages[-1]
        if last["role"] == "user":
            keep = re.search(r"remember that (?:i am|i'm) (.+?)[.!]?$", last["content"], re.IGNORECASE)
            if keep:
                return {"tool_calls": [{"name": "remember", "arguments": {"fact": f"{self.user_name} is {keep.group(1)}"}}]}
            if last["content"].rstrip().endswith("?"):
                query = f"{self.user_name} food preferences allergies diet"
                return {"tool_calls": [{"name": "recall", "arguments": {"query": query}}]}
            return {"content": "Got it."}
        if last["role"] == "tool":
            result = json.loads(last["content"])
            if last["name"] == "remember":
                return {"content": f"Noted - I'll keep in mind that {result['content']}."}
            facts = [m["content"] for m in result["memories"] if m["memory_type"] == "semantic"]
            if not facts:
                return {"content": "I don't know anything about you yet; trail mix is a classic."}
            return {"content": "Try dried mango and rice crackers. I planned around what I know: " + "; ".join(facts) + "."}
        raise ValueError(f"unexpected message role {last['role']!r}")


class Agent:
    """One conversation: each user turn is recorded in the episode, the model runs until it
    answers in words (tool calls executed against the memory service in between)."""

    MAX_STEPS = 4

    def __init__(self, memory: MemoryClient, model: StubModel, user: str, assistant: str = "cooking-assistant") -> None:
        self.memory, self.model, self.user = memory, model, user
        self.episode = memory.start_episode([user, assistant])["episode_id"]
        self.messages: List[Message] = [{"role": "system", "content": "You are a helpful cooking assistant with long-term memory."}]

    def turn(self, text: str) -> str:
        self.memory.add_message(self.episode, "user", text)
        self.messages.append({"role": "user", "content": text})
        for _ in range(self.MAX_STEPS):
            reply = self.model.complete(self.messages, TOOLS)
            if "content" in reply:
                self.messages.append({"role": "assistant", "content": reply["content"]})
                self.memory.add_message(self.episode, "assistant", reply["content"])
                return reply["content"]
            for call in reply["tool_calls"]:
                result = self.run_tool(call["name"], call["arguments"])
                self.messages.append({"role": "tool", "name": call["name"], "content": json.dumps(result)})
        raise RuntimeError("the model did not answer within the step budget")

    def run_tool(self, name: str, arguments: Dict[str, Any]) -> Any:
        if name == "remember":
            return self.memory.remember(self.user, arguments["fact"], confidence=0.9)
        if name == "recall":
            return self.memory.recall(arguments["query"], entity=self.user, limit=5)
        raise ValueError(f"unknown tool {name!r}")

    def close(self) -> int:
        return self.memory.end_episode(self.episode, "success")["memories_created"]


def conversation(memory: MemoryClient, user: str, name: str, turns: List[str]) -> List[str]:
    agent = Agent(memory, StubModel(name), user)
    answers = []
    for text in turns:
        answer = agent.turn(text)
        print(f"  user:      {text}\n  assistant: {answer}")
        answers.append(answer)
    agent.close()
    return answers


CONVERSATIONS = {
    1: ["Hi! Please remember that I am allergic to peanuts."],
    2: ["I'm going hiking tomorrow. What snack should I pack?"],
}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("MEMORY_RUNTIME_URL", "http://localhost:3000"))
    parser.add_argument("--api-key", default=os.environ.get("MEMORY_RUNTIME_API_KEY"))
    parser.add_argument("--user", default="maya", help="the entity the memories belong to")
    parser.add_argument("--name", default="Maya", help="how the user is called in facts")
    parser.add_argument("--conversation", type=int, choices=sorted(CONVERSATIONS), help="run only this one")
    args = parser.parse_args(argv)

    memory = MemoryClient(args.base_url, api_key=args.api_key)
    for number in [args.conversation] if args.conversation else sorted(CONVERSATIONS):
        print(f"conversation {number}:")
        conversation(memory, args.user, args.name, CONVERSATIONS[number])
    return 0


if __name__ == "__main__":
    sys.exit(main())
