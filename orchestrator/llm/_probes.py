"""Questions a client asks a server without a chat call, over ``GET <base_url>/models``.

:meth:`ModelsRoute.check_reachable` is the network half of
:meth:`~.client.ChatClient.preflight` (is anything there at all?);
:meth:`ModelsRoute.model_owners` reads which server software answers. Both cost
nothing: the models route is free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import requests
import urllib3

from orchestrator.llm._transport import Watchdog, connection_kind, get_json
from orchestrator.llm._unusable import unusable
from orchestrator.llm.errors import LLMConnectionError

log = logging.getLogger("orchestrator.llm.client")


@dataclass(frozen=True)
class ModelsRoute:
    """``GET <base_url>/models`` as a client reaches it: its pooled ``session``, its request
    ``headers``, and ``redact``, which hides the client's key in any text it echoes."""

    base_url: str
    session: requests.Session
    headers: dict[str, str]
    redact: Callable[[str], str]

    @property
    def url(self) -> str:
        return self.base_url + "/models"

    def check_reachable(self, timeout_s: float) -> None:
        """Raise :class:`BackendUnreachableError` when the route cannot connect (the host name
        does not resolve, or nothing listens).

        Any HTTP answer, even an error status, proves the server is there; a slow answer is
        not held against it. The body is not read.
        """
        url = self.url
        failure: LLMConnectionError | None = None
        try:
            with Watchdog(timeout_s):
                response = self.session.get(
                    url,
                    headers=self.headers,
                    timeout=(min(timeout_s, 10.0), timeout_s),
                    stream=True,
                )
                response.close()
        except requests.Timeout:
            log.info("preflight: %s did not answer within %.0f s; going on", url, timeout_s)
        except requests.ConnectionError as exc:
            failure = LLMConnectionError(
                self.redact(f"connection to {url} failed: {exc}"), kind=connection_kind(exc)
            )
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            # Slow or broken but there: whatever it is, the chat calls will say.
            log.info("preflight: %s: %s; going on", url, self.redact(str(exc)))
        if failure is not None:
            # A connection failure's restatement does not depend on who the server is.
            error = unusable(failure, self.base_url, None, openrouter=False)
            if error is not None:
                raise error

    def model_owners(self, timeout_s: float) -> list[str]:
        """The ``owned_by`` values the route lists, or [] when the server does not answer
        that usefully within ``timeout_s`` (the whole answer). Reads at most 1 MB."""
        url = self.url
        body, why = get_json(
            url,
            limit_s=timeout_s,
            max_bytes=1_000_000,
            headers=self.headers,
            session=self.session,
            redact=self.redact,
        )
        if why is not None:
            log.info("%s: %s; server software unknown", url, why)
        data = body.get("data") if isinstance(body, dict) else None
        entries = data if isinstance(data, list) else []
        return [
            e["owned_by"]
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("owned_by"), str)
        ]
