"""Build docs/api.md by running every documented call against a freshly seeded server.

Usage (from the project root, with `make run` serving a fresh demo on BASE):
    .venv/bin/python docs/build_api_md.py [--base http://127.0.0.1:8000]

Each example is executed for real; the response shown is the one the server gave.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
INTRO = (HERE / "api_intro.md").read_text()


class Example:
    def __init__(
        self,
        title,
        method,
        path,
        body=None,
        *,
        auth=True,
        note="",
        multipart=None,
        headers=None,
        show_headers=(),
        binary=False,
        keep=3,
        display_body=None,
        api_key=True,
    ):
        self.title, self.method, self.path, self.body = title, method, path, body
        self.auth, self.note, self.multipart, self.headers = auth, note, multipart, headers or {}
        self.show_headers, self.binary, self.keep = show_headers, binary, keep
        self.display_body = display_body
        self.api_key = api_key


def request(base, token, ex: Example) -> tuple[int, httpx.Headers, bytes]:
    headers = {"apiKey": "demo-api-key", **ex.headers} if ex.api_key else dict(ex.headers)
    if ex.auth:
        headers["Authorization"] = f"Bearer {token}"
    files = data = None
    if ex.multipart:
        files = {k: v for k, v in ex.multipart.items() if isinstance(v, tuple)}
        data = {k: str(v) for k, v in ex.multipart.items() if not isinstance(v, tuple)}
    response = httpx.request(
        ex.method,
        base + ex.path,
        headers=headers,
        json=None if ex.multipart else ex.body,
        data=data,
        files=files,
        timeout=60,
    )
    return response.status_code, response.headers, response.content


def curl(ex: Example) -> str:
    first = "curl -s" + (f" -X {ex.method}" if ex.method != "GET" else "")
    parts = [f'{first} "$BASE{ex.path}"']
    if ex.api_key:
        parts.append('-H "apiKey: $API_KEY"')
    if ex.auth:
        parts.append('-H "Authorization: Bearer $TOKEN"')
    for key, value in ex.headers.items():
        parts.append(f"-H {shlex.quote(f'{key}: {value}')}")
    if ex.multipart:
        for name, value in ex.multipart.items():
            if isinstance(value, tuple):
                parts.append(f"-F {shlex.quote(f'{name}=@{value[0]};type={value[2]}')}")
            else:
                parts.append(f"-F {shlex.quote(f'{name}={value}')}")
    elif ex.body is not None:
        parts.append("-H 'Content-Type: application/json'")
        shown = ex.display_body if ex.display_body is not None else shlex.quote(json.dumps(ex.body))
        parts.append(f"-d {shown}")
    if ex.binary:
        parts.append("-o certificate.pdf")
    return " \\\n  ".join(parts)


def trim(value, keep):
    """Shorten long lists so the page stays readable; the count says what was left out."""
    if isinstance(value, dict):
        return {k: trim(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        items = [trim(v, keep) for v in value[:keep]]
        if len(value) > keep:
            items.append(f"… {len(value) - keep} more")
        return items
    return value


def render(base, token, examples) -> str:
    out = [INTRO]
    section = None
    for ex in examples:
        if isinstance(ex, str):
            section = ex
            out.append(f"\n## {section}\n")
            continue
        status, headers, content = request(base, token, ex)
        out.append(f"\n### {ex.title}\n")
        if ex.note:
            out.append(ex.note.strip() + "\n")
        out.append("```bash\n" + curl(ex) + "\n```\n")
        shown = [f"{h}: {headers[h]}" for h in ex.show_headers if h in headers]
        out.append(
            f"Response `{status}`"
            + (" with " + ", ".join(f"`{s}`" for s in shown) if shown else "")
            + ":\n"
        )
        if ex.binary or not content:
            ctype = headers.get("Content-Type", "")
            out.append(f"\n(`{ctype}`, {len(content)} bytes)\n" if content else "\n(no body)\n")
            continue
        body = json.loads(content)
        out.append(
            "```json\n" + json.dumps(trim(body, ex.keep), indent=2, ensure_ascii=False) + "\n```\n"
        )
    return "".join(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--out", default=str(HERE / "api.md"))
    args = parser.parse_args()
    login = Example(
        "",
        "POST",
        "/v1/auth/token",
        {"username": "demo-admin", "password": "demo-password"},
        auth=False,
    )
    _, _, content = request(args.base, None, login)
    tokens = json.loads(content)
    from examples import EXAMPLES  # docs/examples.py, beside this file

    examples = EXAMPLES(Example, refresh=tokens["refresh"])
    Path(args.out).write_text(render(args.base, tokens["access"], examples))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
