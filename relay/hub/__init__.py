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
- ``middleware`` authenticates (``Authorization: token T``, ``Bearer T`` or Basic
  ``login:T``; any length — ``relay hub token --long`` mints 93-character tokens and App
  installation tokens are ``ghs_<app id>_<JWT-like>``, several hundred), injects faults,
  counts requests, answers 304 for a matching ``If-None-Match`` (not charged), serves HEAD
  for every GET, and stamps ``x-ratelimit-*`` and ``x-github-request-id``. The budget is
  per user across all of its tokens (``--rate-limit``, default 5,000 an hour, as GitHub's);
  an App installation has its own, anonymous callers 60 per address. A handler's
  unexpected exception becomes GitHub's JSON ``{"message": "Server Error"}`` 500, still
  stamped, with the traceback logged once to standard error.
- Bad input is GitHub's JSON 4xx (``status`` repeated as a string in the body): wrongly
  typed fields are 422 "Validation Failed" with ``errors``; labels that differ only in case
  are one label; ids beyond SQLite's range are 404 and pages past the end are empty.
- ``PATCH /repos/{o}/{r}`` with ``{"has_issues": false}`` turns issues off: every issue
  endpoint then answers 410 "Issues are disabled for this repo", as GitHub does.

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
faults). These strike before the handler. ``drop_after=P`` and ``502_after=P`` strike
after it, once its write has committed: the connection drops or a 502 comes back although
the comment, label or ref now exists — GitHub's "done, but the answer was lost", which
makes a naive retry post a duplicate comment or find its own claim taken. Shares are
probabilities in [0, 1]; one draw per request, in arrival order. Admin requests are never
faulted or counted.

Known differences from GitHub: adding a collaborator grants access at once (GitHub sends
an invitation the invitee must accept); the git refs point at whatever sha the client names
(the hub stores no git objects); the rate-limit budget lives in memory and starts afresh
when the hub restarts.
"""
