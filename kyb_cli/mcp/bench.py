"""`python -m kyb_cli.mcp.bench STORE [N]`: time `kyb mcp` start-up and N query calls over stdio.

Measures what an agent pays: spawn + initialize + list_tools, then the mean of N `query` calls,
through the SDK's own stdio client.
"""

import sys
import time


def main(argv: list[str]) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    store, calls = argv[0], int(argv[1]) if len(argv) > 1 else 20

    async def run() -> None:
        t0 = time.perf_counter()
        params = StdioServerParameters(command=sys.executable, args=["-m", "kyb_cli", "mcp", "--store", store])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
                t1 = time.perf_counter()
                for _ in range(calls):
                    await session.call_tool("query", {"text": "fact service"})
                t2 = time.perf_counter()
        print(f"start+initialize+list_tools {t1 - t0:.2f} s; query call {1000 * (t2 - t1) / max(calls, 1):.1f} ms mean")

    anyio.run(run)


if __name__ == "__main__":
    main(sys.argv[1:])
