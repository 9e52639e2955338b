"""``manage.py mcp``: the MCP server over stdio, for an MCP client that starts it as a command
(Claude Desktop, an IDE, an agent framework). It serves one user's pipelines and knowledge
bases: the owner of the API token given with ``--token`` (or ``TRELLIS_API_TOKEN``, which keeps
it out of the process list), checked again at every request so a revoked token stops it, or,
for someone with shell access to the server, the account named with ``--user``."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from accounts.services import api_token_authenticate
from gateway.mcp import mcp_server


class Command(BaseCommand):
    help = "Serve your pipelines (ask_<pipeline>) and knowledge bases (search_<knowledge base>) as MCP tools over stdio."

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--token", help="an API token (default: the TRELLIS_API_TOKEN environment variable)")
        who.add_argument("--user", help="serve this user's tools without a token (shell access to the server is the "
                                        "authority)")

    def handle(self, *args: Any, **options: Any) -> None:
        secret = options["token"] or os.environ.get("TRELLIS_API_TOKEN", "")
        if options["user"]:
            try:
                user = get_user_model().objects.get_by_natural_key(options["user"])
            except get_user_model().DoesNotExist:
                raise CommandError(f"no user {options['user']!r}") from None

            async def user_of(ctx: Any) -> Any:
                return user
        elif secret:
            if api_token_authenticate(secret=secret) is None:
                raise CommandError("this API token is not valid: it was revoked, or never existed")

            async def user_of(ctx: Any) -> Any:
                token = await database_sync_to_async(api_token_authenticate)(secret=secret)
                if token is None:
                    raise PermissionError("this API token was revoked")
                return token.owner
        else:
            raise CommandError("give an API token (--token or TRELLIS_API_TOKEN; make one on your account page) "
                               "or --user")
        server = mcp_server(user_of)

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        asyncio.run(serve())
