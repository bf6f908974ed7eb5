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
  after the write (webhook deliveries are queued only once it is committed). The writes of
  the API requests served in one turn of the event loop share one transaction and one
  COMMIT (each a savepoint of it), and each of those requests answers only after it.
  Issue events (``labeled``, ``closed``…) are read from the journal; webhooks subscribe
  to the same listeners.
- ``middleware`` authenticates (``Authorization: token T``, ``Bearer T`` or Basic
  ``login:T``; any length — ``relay hub token --long`` mints 93-character tokens and App
  installation tokens are ``ghs_<app id>_<JWT-like>``, several hundred), injects faults,
  counts requests, answers 304 for a matching ``If-None-Match`` or an ``If-Modified-Since``
  no earlier than ``Last-Modified`` (not charged), serves HEAD for every GET, and stamps
  ``x-ratelimit-*``, ``x-github-request-id`` and ``X-GitHub-Api-Version-Selected``. The
  budget is per user across all of its tokens (``--rate-limit``, default 5,000 an hour, as
  GitHub's); an App installation has its own, anonymous callers 60 per address. A handler's
  unexpected exception becomes GitHub's JSON ``{"message": "Server Error"}`` 500, still
  stamped, with the traceback logged once to standard error. An ETag is the hash of the
  body a 200 carries; the store counts its write transactions (``Store.version``, in
  memory, with other processes' commits seen through SQLite's ``data_version``), and a GET
  that reads the store alone (``app.VERSIONED_GETS``) is kept with the version it was
  answered at, so until the next write the same request is answered — 304
  or 200 — without rendering.
- Refused as GitHub refuses them: an ``X-GitHub-Api-Version`` other than ``2022-11-28`` or
  ``2026-03-10`` (400; none means 2022-11-28); more content-creating requests (POST, PATCH,
  PUT, DELETE) than the secondary limit allows (``--content-limit``, default GitHub's 80 a
  minute and 500 an hour per user: 403 naming the secondary rate limit, with
  ``Retry-After``); ``GET /user`` with an App installation token (403 "Resource not
  accessible by integration"); ref names ``git check-ref-format`` refuses (422); label
  descriptions over 100 characters (422). Removing a label from an issue matches its name's
  case exactly. A 4xx's ``documentation_url`` names the endpoint's page.
- ``git`` and ``api_git`` host the repositories' git: each repository created through the
  API has a bare repository ``<data>/git/<id>.git``, served over smart HTTP at GitHub's
  paths (``<base>/<owner>/<repo>.git``) by git's upload-pack and receive-pack,
  authenticated with the same tokens (Basic password, any user name) and the API's access
  rules (anonymous: a 401 challenge when it needs more; hidden: 404; a reader pushing:
  403). Git requests are neither charged nor faulted.
  The refs API (``api_refs``) reads and writes that repository's refs, so a claim made
  through the API is what ``git ls-remote`` lists and a pushed ref is what the API lists;
  a sha the repository lacks is 422 "Object does not exist", and a move that is not a
  fast-forward needs ``force``.
- ``api_branches`` and ``protection``: ``GET /branches[/{b}]`` (``protected`` and the
  ``protection`` summary) and classic protection (``GET|PUT|DELETE
  /branches/{b}/protection``, admin only). A protected branch refuses a push as GitHub's
  git host does (``remote: error: GH006: Protected branch update failed for
  refs/heads/main.``, the reason, ``protected branch hook declined``; git's
  ``proc-receive`` hook, ``receive``) and a refs-API move with 422 and the reason.
  Rulesets (``GH013``) are not modelled.
- ``api_environments``: deployment environments (``GET /environments``, ``GET|PUT|DELETE
  /environments/{name}``) and their custom branch policies, admin-only writes, so that
  `relay doctor` can tell whether any branch's workflow could read an environment's
  secrets; an App installation gets 403 (the hub's Apps lack the Actions permission).
- Bad input is GitHub's JSON 4xx (``status`` repeated as a string in the body): wrongly
  typed fields are 422 "Validation Failed" with ``errors``; labels that differ only in case
  are one label; ids beyond SQLite's range are 404 and pages past the end are empty.
- ``PATCH /repos/{o}/{r}`` with ``{"has_issues": false}`` turns issues off: every issue
  endpoint then answers 410 "Issues are disabled for this repo", as GitHub does.

- ``api_graphql`` and ``graphql_types``: GraphQL at ``POST /graphql`` (and ``/api/graphql``,
  GitHub Enterprise Server's path), run by graphql-core over ``github.graphql``, a subset of
  GitHub's published schema with GitHub's types (a test holds it to the vendored original):
  ``viewer``, ``repository`` (issues, labels, ``issueOrPullRequest``), ``node``/``nodes``
  with the REST ``node_id``, ``rateLimit``, issue ``search`` (GitHub's qualifiers gh sends);
  issues and comments with ``editor``,
  ``lastEditedAt`` and ``userContentEdits`` from the journal, reactions and label events;
  and the issue mutations gh uses, written through the REST handlers' functions (same
  journal, events, webhooks). GitHub's error shapes (``undefinedField``, ``NOT_FOUND``,
  ``FORBIDDEN``…), a budget of its own (``x-ratelimit-resource: graphql``) charged by
  GitHub's cost arithmetic; only mutations count toward the secondary limit.

- GitHub Enterprise Server's shape: every REST route is served under ``/api/v3`` too (its
  answers' API URLs under it, the ``html_url`` fields and git at the origin's root), with the API
  root at ``/api/v3/``; ``--tls`` serves HTTPS with a server certificate from a CA of the
  hub's own (``tls``; the CA in ``DATA/tls/ca.pem``), so that ``gh`` reaches the hub as an
  Enterprise host (``relay hub env gh``). A classic token's answers say its scopes
  (``X-OAuth-Scopes``, ``X-Accepted-OAuth-Scopes``), which ``gh auth status`` checks.
- What other clients meet on GitHub: a JSON 404 with rate-limit headers for every API path
  the hub does not serve (``/orgs/x`` too; pages keep their HTML 404), a strong ``ETag`` on
  write answers, ``Location`` on a 201, GitHub's nine default labels on a new repository,
  the merge settings, ``temp_clone_token`` and ``organization`` in the repository object,
  every repository route also at ``/repositories/{id}``, and a rename's old name answering
  301 (reads) or 307 (writes) to ``/repositories/{id}/...``, for git and pages too.
- ``api_invitations`` (``--invitations``: a collaborator is invited and collaborates once
  they accept; by default added at once) and ``api_orgs``: organisations made by an admin
  of the hub (``POST /admin/organizations``), owners and members, teams with roles on the
  organisation's repositories, and branch-protection ``restrictions`` naming its users and
  teams, who alone may then push to the branch, by git or the refs API (a user's
  repository gets GitHub's 422).

Admin endpoints (only for a token made with ``relay hub token LOGIN --admin``; any other
caller gets 404, as for anything it may not see):

- ``GET|POST|DELETE /_hub/faults`` — read, set (``{"spec": "..."}``) or clear the faults.
- ``GET|DELETE /_hub/requests`` — request counters by method, path and status; reset.
- ``POST /_hub/apps`` — register a GitHub App (its public key) with an installation on
  some repositories; its JWT then buys installation tokens (see ``apps``).

Webhooks: ``/repos/{o}/{r}/hooks`` and their deliveries live in ``hooks``.

Web pages for people live in ``pages`` (HTML from ``views``, markdown through
``markdown``), at github.com's paths, so every ``html_url`` the API returns opens: the
issue list ``/<owner>/<repo>/issues`` (``?q=is:open label:working`` or
``?state=&labels=``), a thread ``/<owner>/<repo>/issues/<n>`` (refreshing itself while
open), ``/<owner>/<repo>`` and ``tree/<ref>/<path>``, ``blob/<ref>/<path>`` (where a
RESULT's log link points) and ``raw/<ref>/<path>``. A browser signs in at ``/login`` with
a hub token. Pages are not charged to the rate limit nor faulted, run no script (CSP) and
show markdown sanitised, HTML comments — relay's hidden blocks — left out, as on GitHub.

Fault spec (``--faults`` or the admin endpoint), comma-separated ``key=value``:
``seed=N`` (deterministic draws), ``500=P``, ``502=P``, ``503=P``, ``429=P``,
``secondary=P`` (403 naming the secondary rate limit), ``drop=P`` (connection closed without
an answer), ``slow=P`` with ``latency=SECONDS`` (added delay; ``latency`` alone slows
every request), ``retry_after=N`` (seconds, default 1), ``limit=N`` (stop after N
faults) and ``on=METHOD:TEXT`` (fault only requests of that method whose path holds
TEXT). These strike before the handler. ``drop_after=P`` and ``502_after=P`` strike
after it, once its write has committed: the connection drops or a 502 comes back although
the comment, label or ref now exists — GitHub's "done, but the answer was lost", which
makes a naive retry post a duplicate comment or find its own claim taken. Shares are
probabilities in [0, 1]; one draw per request, in arrival order. Admin requests are never
faulted or counted.

Known differences from GitHub: adding a collaborator grants access at once unless the hub
runs with ``--invitations`` (GitHub sends an invitation the invitee must accept), and an
organisation's membership is active at once; protection ``restrictions`` name users and
teams only (no Apps); the ``ETag`` of a write answer is the hub's
own digest (GitHub's differs); the rate-limit and secondary-limit budgets live in
memory and start afresh when the hub restarts; the git host serves only the smart
protocol over HTTP (no SSH, no ``git://``) and no other git endpoints of the REST API
(commits, trees, blobs, contents); ``/rate_limit`` reports full budgets for the resources
the hub does not serve (search and the rest); both API versions get the same shapes; the
secondary limit counts content only (GitHub also limits concurrency and asks for a second
between mutations); a ref's ``object.type`` is always ``commit``; GraphQL serves only the
schema subset above (a syntax error is worded by graphql-core, not as graphql-ruby words it),
has no pull requests, milestones, assignees or projects, and keeps no reason per close event.

Refs are git's, as on GitHub: every repository's refs are its hosted git's from the start,
an empty one answers 409 "Git Repository is empty." and a ref at a sha the repository lacks
is 422 "Object does not exist". Two modes for other uses:

- ``--api-only``, for clients whose git remote is elsewhere: a repository whose hosted git
  holds no object yet (nobody pushed to it) keeps its refs in SQLite at any 40-hex sha;
  from its first push on, its refs are its git's (the refs it kept move into git where git
  holds their sha; the others are dropped). The API suites (hub, edges) use it to test
  refs at shas no git holds; relay's demo and end-to-end suites use the default.
- ``--app-user`` makes ``GET /user`` answer an App installation token as its bot, for
  clients that still ask it; ``relay hub`` refuses it by default, and relay no longer
  needs it (an App node asks ``GET /app`` with its JWT, then ``GET /users/<slug>[bot]``).

The shared test hubs pass ``--content-limit 0/0`` (the suites create content far faster
than GitHub's secondary limit allows).
"""
