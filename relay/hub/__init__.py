"""`relay hub`: the embedded GitHub — the part of GitHub's REST API that relay uses.

Ground rules: clients use the hub's origin (``http://127.0.0.1:PORT``) exactly as they use
``https://api.github.com``; only the base URL and the token differ. Where relay depends on a
behaviour (JSON shapes, status codes, ``Link`` pagination, ``ETag``/304, rate-limit headers,
``since``, ordering, 422 texts), the hub does what GitHub does, because a test that passes
against a friendlier fake proves nothing.

Theory of operation:

- ``store`` owns SQLite (stdlib ``sqlite3``, WAL). The server uses one connection from the
  event-loop thread only, and no mutation awaits, so there is exactly one writer and issue
  numbers and ids can never repeat. ``relay hub token`` writes users and tokens from its
  own process; WAL and a busy timeout make that safe.
- Every mutation goes through ``Store.record`` which appends one row to the ``journal``
  table (kind, action, actor, issue, comment, label) and then calls the hub's listeners
  after the transaction commits. Issue events (``labeled``, ``closed``…) are read from the
  journal; webhooks can subscribe to the same listeners.
- ``middleware`` authenticates (``Authorization: token T`` or ``Bearer T``, any length),
  injects faults, counts requests, answers 304 for a matching ``If-None-Match`` (not
  charged) and stamps the ``x-ratelimit-*`` headers (5,000 per token per hour).

Admin endpoints (only for a token made with ``relay hub token LOGIN --admin``; any other
caller gets 404, as for anything it may not see):

- ``GET|POST|DELETE /_hub/faults`` — read, set (``{"spec": "..."}``) or clear the faults.
- ``GET|DELETE /_hub/requests`` — request counters by method, path and status; reset.
- ``POST /_hub/apps`` — register a GitHub App (its public key) with an installation on
  some repositories; its JWT then buys installation tokens (see ``apps``).

Webhooks: ``/repos/{o}/{r}/hooks`` and their deliveries live in ``hooks``.

Fault spec (``--faults`` or the admin endpoint), comma-separated ``key=value``:
``seed=N`` (deterministic draws), ``500=P``, ``502=P``, ``503=P``, ``429=P``,
``secondary=P`` (403 naming the secondary rate limit), ``drop=P`` (connection closed without
an answer), ``slow=P`` with ``latency=SECONDS`` (added delay; ``latency`` alone slows
every request), ``retry_after=N`` (seconds, default 1) and ``limit=N`` (stop after N
faults). Shares are probabilities in [0, 1]; one draw per request, in arrival order.
Admin requests are never faulted or counted.

Known differences from GitHub: adding a collaborator grants access at once (GitHub sends
an invitation the invitee must accept); the git refs point at whatever sha the client names
(the hub stores no git objects); the rate-limit budget lives in memory and starts afresh
when the hub restarts.
"""
