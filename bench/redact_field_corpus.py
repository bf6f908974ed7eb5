# ruff: noqa: E501 - a table of line templates, each kept on one line to be read as a line
"""The field's test data, written anew: secrets of every self-identifying format the public
scanners know, in every kind of line, and lines that hold none, from real code and logs.

Independent of ``relay.redact``: the shapes below are written from the public rule sets'
facts (gitleaks' rules, trufflehog's detectors, detect-secrets' plugins, the vendors' own
documents: prefix, length, alphabet), not read from the format table, so that the
measurement says what the table misses. Each secret is synthetic, made from a seed.

Kinds of secret line (``Case.kind``):

- ``bare``: a self-identifying token alone on a line;
- ``prose``: the same in a sentence;
- ``code``: in a code sample, as an argument or a literal, under no secret name;
- ``config``: in a config line under a neutral name (``value:``, ``default =``);
- ``url``: in a URL's path or query under a neutral name;
- ``named``: a value of any shape (a token, a random key, a password) under a secret's name,
  in every syntax (shell, YAML, JSON, XML, code, flags, headers, Docker, PowerShell);
- ``webhook``: a chat, incident or automation service's URL, which is the credential;
- ``connection``: a database's or a queue's connection string with its password;
- ``transform``: this node's own secret as a step may print it (reversed, re-cased, spaced,
  folded, base64/base32/hex at any alignment and wrapped across lines, rot13, ``\\uXXXX``,
  ``%XX``).

Lines that hold no secret (``Clean.family``) are made from templates of real code and logs:
identifiers that hold secret words, hashes, UUIDs, base64 of ordinary data, version strings,
URLs, documented placeholders, references; and log, config, code and shell lines drawn from
parts. No line is drawn twice (a template with nothing to draw counts once).

Passwords hold blanks, quotes, backslashes and brackets too, written as each syntax must
write them (escaped inside a quoted string, quoted where the syntax would leave them bare,
percent-encoded in a URL: see ``_written`` and ``_in_connection``).
"""

from __future__ import annotations

import base64
import codecs
import json
import random
import string
import urllib.parse
from dataclasses import dataclass

B62 = string.ascii_letters + string.digits
ALPHABETS = {
    "A": B62,
    "a": string.ascii_lowercase + string.digits,
    "U": string.ascii_uppercase + string.digits,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "X": "0123456789abcdefABCDEF",
    "D": string.digits,
    "L": string.ascii_letters,
    "l": string.ascii_lowercase,
    "u": B62 + "-_",
    "b": B62 + "+/",
    "Z": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    "z": "abcdefghijklmnopqrstuvwxyz234567",
    "B": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}
OWN_SECRET = "Relay-n0de-S3cret-7Qx9Lm2Vb8"


def fill(template: str, rng: random.Random) -> str:
    """``{36A}`` is 36 base62 characters, ``{8-10D}`` 8 to 10 digits, ``{uuid}`` a UUID."""
    out, i = [], 0
    while i < len(template):
        if template[i] != "{":
            out.append(template[i])
            i += 1
            continue
        j = template.index("}", i)
        spec = template[i + 1 : j]
        i = j + 1
        if spec == "uuid":
            h = "".join(rng.choices("0123456789abcdef", k=32))
            out.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}")
            continue
        count, code = spec[:-1], spec[-1]
        low, _, high = count.partition("-")
        n = rng.randint(int(low), int(high or low))
        chars = ALPHABETS[code]
        while True:
            value = "".join(rng.choices(chars, k=n))
            # a random part of eight or more has both cases and a digit where its alphabet
            # does (what a generator gives, and what an issuer's tokens show)
            if n < 8 or code not in "AbuL" or _mixed(value, code):
                break
        out.append(value)
    return "".join(out)


def _mixed(value: str, code: str) -> bool:
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    digit = any(c.isdigit() for c in value) or code == "L"
    return upper and lower and digit


# Self-identifying formats: (name, template). Written from the public rule sets' facts.
FORMATS: tuple[tuple[str, str], ...] = (
    ("github-pat", "ghp_{36A}"),
    ("github-oauth", "gho_{36A}"),
    ("github-user-to-server", "ghu_{36A}"),
    ("github-server-to-server", "ghs_{36A}"),
    ("github-refresh", "ghr_{36A}"),
    ("github-fine-grained", "github_pat_11{20U}_{59A}"),
    ("gitlab-pat", "glpat-{20u}"),
    ("gitlab-pat-routable", "glpat-{27-40u}.01.{9a}"),
    ("gitlab-pipeline-trigger", "glptt-{40h}"),
    ("gitlab-runner-registration", "GR1348941{20u}"),
    ("gitlab-runner-auth", "glrt-{20u}"),
    ("gitlab-deploy", "gldt-{20u}"),
    ("gitlab-feed", "glft-{20u}"),
    ("gitlab-oauth-secret", "gloas-{64u}"),
    ("gitlab-scim", "glsoat-{20u}"),
    ("gitlab-ci-job", "glcbt-{1-5A}_{20u}"),
    ("gitlab-incoming-mail", "glimt-{25u}"),
    ("gitlab-agent", "glagent-{50u}"),
    ("gitlab-feature-flag", "glffct-{20u}"),
    ("bitbucket-app-password", "ATBB{32A}"),
    ("atlassian-api-token", "ATATT3{186u}"),
    ("aws-access-key-id", "AKIA{16Z}"),
    ("aws-temp-access-key-id", "ASIA{16Z}"),
    ("aws-session-token", "IQoJb3JpZ2luX2Vj{300b}"),
    ("aws-bedrock-long-lived", "ABSKQmVkcm9ja0FQSUtleS1{120b}"),
    ("google-api-key", "AIza{35u}"),
    ("google-oauth-secret", "GOCSPX-{28u}"),
    ("google-oauth-access", "ya29.{120u}"),
    ("google-oauth-refresh", "1//0{60u}"),
    ("azure-ad-client-secret", "{3A}8Q~{34A}"),
    ("azure-devops-pat", "{76A}AZDO{4A}"),
    ("alibaba-access-key", "LTAI{20A}"),
    ("tencent-secret-id", "AKID{32A}"),
    ("digitalocean-pat", "dop_v1_{64h}"),
    ("digitalocean-oauth", "doo_v1_{64h}"),
    ("digitalocean-refresh", "dor_v1_{64h}"),
    ("databricks", "dapi{32h}"),
    ("cloudflare-origin-ca", "v1.0-{24h}-{146h}"),
    ("dropbox-short-lived", "sl.{135u}"),
    ("scaleway", "SCW{17U}"),
    ("yandex-api-key", "AQVN{36u}"),
    ("heroku-v2", "HRKU-AA{58u}"),
    ("npm", "npm_{36A}"),
    ("pypi", "pypi-AgEIcHlwaS5vcmc{70u}"),
    ("rubygems", "rubygems_{48h}"),
    ("nuget", "oy2{43a}"),
    ("clojars", "CLOJARS_{60a}"),
    ("docker-hub-pat", "dckr_pat_{27u}"),
    ("jfrog-api-key", "AKCp{69A}"),
    ("jfrog-reference", "cmVmdGtuOjAxOj{50A}"),
    ("terraform-cloud", "{14A}.atlasv1.{67u}"),
    ("pulumi", "pul-{40h}"),
    ("vercel", "vcp_{24A}"),
    ("netlify", "nfp_{36A}"),
    ("fly-access", "fo1_{43u}"),
    ("fly-macaroon", "fm2_{150b}"),
    ("doppler", "dp.pt.{43A}"),
    ("doppler-service", "dp.st.{43A}"),
    ("planetscale", "pscale_tkn_{43u}"),
    ("planetscale-password", "pscale_pw_{43u}"),
    ("supabase", "sbp_{40h}"),
    ("vault-service", "hvs.{95u}"),
    ("vault-batch", "hvb.{150u}"),
    ("onepassword-service", "ops_eyJ{260b}"),
    ("onepassword-secret-key", "A3-{6U}-{11U}-{5U}-{5U}-{5U}"),
    ("age", "AGE-SECRET-KEY-1{58B}"),
    ("postman", "PMAK-{24h}-{34h}"),
    ("grafana-cloud", "glc_{80b}"),
    ("grafana-service-account", "glsa_{32A}_{8h}"),
    ("sentry-user", "sntryu_{64h}"),
    ("new-relic-user", "NRAK-{27U}"),
    ("new-relic-insert", "NRII-{32u}"),
    ("new-relic-browser", "NRJS-{19h}"),
    ("dynatrace", "dt0c01.{24U}.{64U}"),
    ("linear", "lin_api_{40A}"),
    ("notion", "ntn_{11D}{35A}"),
    ("notion-legacy", "secret_{43A}"),
    ("airtable-pat", "pat{14A}.{64h}"),
    ("contentful", "CFPAT-{43u}"),
    ("figma", "figd_{40u}"),
    ("shopify-access", "shpat_{32h}"),
    ("shopify-custom", "shpca_{32h}"),
    ("shopify-private", "shppa_{32h}"),
    ("shopify-shared-secret", "shpss_{32h}"),
    ("stripe-live", "sk_live_{24-99A}"),
    ("stripe-test", "sk_test_{24-99A}"),
    ("stripe-restricted", "rk_live_{24-99A}"),
    ("stripe-webhook-secret", "whsec_{32A}"),
    ("square-access", "EAAA{60u}"),
    ("square-oauth-secret", "sq0csp-{43u}"),
    ("square-application", "sq0atp-{22u}"),
    ("braintree", "access_token$production${16a}${32h}"),
    ("flutterwave-secret", "FLWSECK_TEST-{32h}-X"),
    ("duffel", "duffel_live_{43u}"),
    ("easypost", "EZAK{54A}"),
    ("shippo", "shippo_live_{40h}"),
    ("plaid-access", "access-production-{uuid}"),
    ("mapbox-secret", "sk.eyJ{80u}.{22u}"),
    ("slack-bot", "xoxb-{10-13D}-{10-13D}-{24A}"),
    ("slack-user", "xoxp-{10-13D}-{10-13D}-{10-13D}-{32h}"),
    ("slack-app", "xapp-1-A{10U}-{13D}-{64h}"),
    ("slack-config", "xoxe.xoxp-1-{164U}"),
    ("slack-refresh", "xoxe-1-{146U}"),
    ("discord-bot", "MT{22u}.{6u}.{38u}"),
    ("telegram-bot", "{8-10D}:AA{33u}"),
    ("twilio-api-key", "SK{32h}"),
    ("sendgrid", "SG.{22u}.{43u}"),
    ("sendinblue", "xkeysib-{64h}-{16A}"),
    ("mailchimp", "{32h}-us{1-2D}"),
    ("mailgun", "key-{32h}"),
    ("hubspot-pat", "pat-na1-{uuid}"),
    ("twitter-bearer", "AAAAAAAAAAAAAAAAAAAAA{90A}"),
    ("facebook-page-token", "EAAC{120A}"),
    ("adafruit", "aio_{28A}"),
    ("mailersend", "mlsn.{64h}"),
    ("openai-project", "sk-proj-{156u}"),
    ("openai-legacy", "sk-{20A}T3BlbkFJ{20A}"),
    ("openai-svcacct", "sk-svcacct-{74u}T3BlbkFJ{74u}"),
    ("anthropic", "sk-ant-api03-{93u}AA"),
    ("anthropic-admin", "sk-ant-admin01-{93u}AA"),
    ("huggingface", "hf_{34L}"),
    ("huggingface-org", "api_org_{34L}"),
    ("groq", "gsk_{52A}"),
    ("replicate", "r8_{37A}"),
    ("perplexity", "pplx-{48A}"),
    ("xai", "xai-{80A}"),
    ("langsmith", "lsv2_pt_{32h}_{10h}"),
    ("pinecone", "pcsk_{60A}"),
    ("nvidia", "nvapi-{64u}"),
    ("deepseek", "sk-{32h}"),
    ("openrouter", "sk-or-v1-{64h}"),
    ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{60u}.{43u}"),
    ("private-key-openssh-header", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("infracost", "ico-{32A}"),
    ("prefect", "pnu_{36A}"),
    ("readme", "rdme_{70a}"),
    ("scalingo", "tk-us-{48u}"),
    ("sourcegraph", "sgp_{16h}_{40h}"),
    ("sonarqube", "squ_{40h}"),
    ("buildkite", "bkua_{40h}"),
    ("octopus", "API-{26U}"),
    ("harness", "pat.{22u}.{24A}.{20A}"),
    ("intra42", "s-s4t2ud-{64h}"),
    ("maxmind", "{6A}_{29A}_mmk"),
    ("clickhouse", "4b1d{38A}"),
    ("authress", "sc_{10a}.{5a}.acc_{26a}.{60b}"),
    ("settlemint", "sm_pat_{16A}"),
    ("frameio", "fio-u-{64u}"),
    ("typeform", "tfp_{59a}"),
    ("defined-networking", "dnkey-{26a}-{52a}"),
    ("openshift", "sha256~{43u}"),
    ("lob", "live_{35h}"),
    ("gocardless", "live_{40u}"),
    ("twitch-stream", "live_{9D}_{30A}"),
    ("zoho", "1000.{32h}.{32h}"),
    ("tailscale", "tskey-auth-{15A}-{30A}"),
    ("posthog", "phx_{43A}"),
    ("rootly", "rootly_{64h}"),
    ("mongodb-atlas-sa", "mdb_sa_sk_{40u}"),
    ("aiven", "AVNS_{22u}"),
    ("vault-legacy", "s.{24A}"),
    ("docker-hub-oat", "dckr_oat_{32u}"),
    ("circleci-pat", "CCIPAT_{22A}_{40h}"),
    ("langsmith-service", "lsv2_sk_{32h}_{10h}"),
    ("openai-admin", "sk-admin-{74u}T3BlbkFJ{74u}"),
    ("facebook-app-token", "{15D}|{27u}"),
    ("slack-legacy-workspace", "xoxa-2-{40A}"),
    ("aws-a3t", "A3TX{16Z}"),
    ("aws-abia", "ABIA{16Z}"),
    ("grafana-api-key", "eyJrIjoi{80A}"),
    ("sentry-org", "sntrys_eyJpYXQiO{120b}"),
    ("new-relic-license", "{36h}NRAL"),
    ("azure-storage-sas", "sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig={43b}%3D"),
    ("hashicorp-tfe", "{14a}.atlasv1.{64u}"),
    ("stripe-restricted-test", "rk_test_{24-99A}"),
    ("twilio-account-auth", "AC{32h}:{32h}"),
    ("dropbox-long-lived", "{11a}AAAAAAAAAA{43u}"),
    ("tailscale-api", "tskey-api-{12A}-{32A}"),
)

WEBHOOKS: tuple[tuple[str, str], ...] = (
    ("slack", "https://hooks.slack.com/services/T{8-10U}/B{8-10U}/{24A}"),
    ("slack-workflow", "https://hooks.slack.com/workflows/T{9U}/A{10U}/{18D}/{24A}"),
    ("slack-trigger", "https://hooks.slack.com/triggers/T{9U}/{13D}/{32h}"),
    ("discord", "https://discord.com/api/webhooks/{18-19D}/{68u}"),
    ("discordapp", "https://discordapp.com/api/webhooks/{18D}/{68u}"),
    ("discord-versioned", "https://discord.com/api/v10/webhooks/{19D}/{68u}"),
    (
        "teams",
        "https://{5-10l}.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{32h}/{uuid}",
    ),
    (
        "teams-v2",
        "https://{5-10l}.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{32h}/{uuid}"
        "/V2{43u}",
    ),
    (
        "teams-legacy",
        "https://outlook.office.com/webhook/{uuid}@{uuid}/IncomingWebhook/{32h}/{uuid}",
    ),
    (
        "power-automate",
        "https://prod-{2D}.westeurope.logic.azure.com:443/workflows/{32h}/triggers/manual/paths/"
        "invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={43u}",
    ),
    (
        "google-chat",
        "https://chat.googleapis.com/v1/spaces/AAAA{7u}/messages?key=AIza{35u}&token={43u}",
    ),
    ("pagerduty", "https://events.pagerduty.com/integration/{32h}/enqueue"),
    ("opsgenie", "https://api.opsgenie.com/v1/json/integrations/webhooks/prometheus?apiKey={uuid}"),
    ("zapier", "https://hooks.zapier.com/hooks/catch/{7-8D}/{6-7a}/"),
    ("ifttt", "https://maker.ifttt.com/trigger/{5-12l}/with/key/{22u}"),
    ("ifttt-use", "https://maker.ifttt.com/use/{22u}"),
    ("mattermost", "https://chat.{5-10l}.com/hooks/{26a}"),
    ("rocketchat", "https://rocket.{5-10l}.org/hooks/{17A}/{48A}"),
    ("telegram", "https://api.telegram.org/bot{9-10D}:AA{33u}/sendMessage"),
    ("feishu", "https://open.feishu.cn/open-apis/bot/v2/hook/{uuid}"),
    ("dingtalk", "https://oapi.dingtalk.com/robot/send?access_token={64h}"),
    ("wecom", "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={uuid}"),
    ("webex", "https://webexapis.com/v1/webhooks/incoming/Y2lzY29zcGFyazovL3VzL1dFQkhPT0sv{48u}"),
    ("netlify-build-hook", "https://api.netlify.com/build_hooks/{24h}"),
    ("vercel-deploy-hook", "https://api.vercel.com/v1/integrations/deploy/prj_{28A}/{10A}"),
    ("n8n", "https://n8n.{5-10l}.io/webhook/{uuid}"),
    ("datadog-intake", "https://http-intake.logs.datadoghq.com/api/v2/logs?dd-api-key={32h}"),
    ("sentry-dsn", "https://{32h}@o{6-7D}.ingest.sentry.io/{7D}"),
    ("twilio-basic", "https://AC{32h}:{32h}@api.twilio.com/2010-04-01/Accounts"),
    ("make", "https://hook.eu{1D}.make.com/{32a}"),
    ("pipedream", "https://{16a}.m.pipedream.net"),
    ("victorops", "https://alert.victorops.com/integrations/generic/20131114/alert/{uuid}/ops"),
    (
        "grafana-oncall",
        "https://oncall-prod-eu-west-0.grafana.net/oncall/integrations/v1/alertmanager/{25A}/",
    ),
    ("squadcast", "https://api.squadcast.com/v2/incidents/api/{40h}"),
    ("betterstack", "https://uptime.betterstack.com/api/v1/incoming-webhook/{24A}"),
    (
        "airtable",
        "https://hooks.airtable.com/workflows/v1/genericWebhook/app{14A}/wfl{14A}/wtr{14A}",
    ),
    ("azure-function", "https://{5-10l}.azurewebsites.net/api/HttpTrigger?code={54u}=="),
    ("apps-script", "https://script.google.com/macros/s/AKfycb{66u}/exec"),
    ("jira-automation", "https://automation.atlassian.com/pro/hooks/{40h}"),
    (
        "cloudflare-pages-deploy-hook",
        "https://api.cloudflare.com/client/v4/pages/webhooks/deploy_hooks/{uuid}",
    ),
    ("render-deploy-hook", "https://api.render.com/deploy/srv-{20a}?key={11u}"),
    ("zenduty", "https://www.zenduty.com/api/integration/generic/{uuid}/"),
    (
        "zoom-webhook",
        "https://integrations.zoom.us/chat/webhooks/incomingwebhook/{22u}?format=full",
    ),
    ("bitrix24", "https://{5-10l}.bitrix24.com/rest/{1-3D}/{16a}/im.message.add.json"),
    ("cronitor", "https://cronitor.link/p/{32h}/nightly-backup"),
)

CONNECTIONS: tuple[tuple[str, str], ...] = (
    ("postgres", "postgres://app:{P}@db.internal:5432/app"),
    ("postgresql", "postgresql://svc_ro:{P}@10.0.3.12:5432/analytics?sslmode=require"),
    ("mysql", "mysql://root:{P}@mysql:3306/shop"),
    ("mariadb", "mariadb://admin:{P}@maria.prod:3306/crm"),
    ("mongodb", "mongodb://admin:{P}@mongo-0:27017,mongo-1:27017/app?replicaSet=rs0"),
    ("mongodb-srv", "mongodb+srv://app-user:{P}@cluster0.{5a}.mongodb.net/prod?retryWrites=true"),
    ("redis", "redis://:{P}@cache:6379/0"),
    ("rediss", "rediss://default:{P}@redis-{5D}.c1.us-east-1-2.ec2.cloud.redislabs.com:{5D}"),
    ("amqp", "amqp://worker:{P}@rabbitmq:5672/%2F"),
    ("amqps", "amqps://svc:{P}@b-{uuid}.mq.eu-west-1.amazonaws.com:5671"),
    ("mssql", "mssql://sa:{P}@sql01:1433/master"),
    (
        "sqlserver-ado",
        "Server=tcp:sql01.database.windows.net,1433;Database=app;User ID=app;Password={P};Encrypt=True;",
    ),
    ("sqlserver-pwd", "Data Source=db01;Initial Catalog=Shop;User Id=app;Pwd={P};"),
    ("jdbc-mysql", "jdbc:mysql://db:3306/shop?user=root&password={P}&useSSL=false"),
    ("jdbc-postgres", "jdbc:postgresql://db:5432/shop?user=app&password={P}"),
    ("jdbc-sqlserver", "jdbc:sqlserver://db:1433;databaseName=shop;user=sa;password={P};"),
    ("oracle", "jdbc:oracle:thin:scott/{P}@//ora.internal:1521/ORCLPDB1"),
    (
        "azure-storage",
        "DefaultEndpointsProtocol=https;AccountName={8l};AccountKey={86b}==;EndpointSuffix=core.windows.net",
    ),
    (
        "azure-service-bus",
        "Endpoint=sb://{8l}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={43b}=",
    ),
    ("clickhouse", "clickhouse://default:{P}@ch:9000/default"),
    ("neo4j", "neo4j+s://neo4j:{P}@{8a}.databases.neo4j.io"),
    ("cassandra", "cassandra://cass:{P}@node1:9042/ks"),
    ("snowflake", "snowflake://jsmith:{P}@myorg-acct/db/schema?warehouse=wh"),
    ("elasticsearch", "https://elastic:{P}@es.internal:9200"),
    ("ftp", "ftp://deploy:{P}@ftp.example.net/pub"),
    ("libpq-keywords", "host=db.internal port=5432 user=app password={P} dbname=app"),
    (
        "kafka-jaas",
        'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" password="{P}";',
    ),
)

# Named syntaxes: (syntax, name). ``{v}`` is the value.
NAMED: tuple[str, ...] = (
    "API_KEY={v}",
    'export GITHUB_TOKEN="{v}"',
    "DB_PASSWORD={v}",
    "  password: {v}",
    "  api_key: '{v}'",
    '  "token": "{v}",',
    '{{"client_secret":"{v}"}}',
    "<password>{v}</password>",
    "<apiKey>{v}</apiKey>",
    '<add key="StorageAccountKey" value="{v}" />',
    "--token {v}",
    "--password={v}",
    "Authorization: Bearer {v}",
    "X-API-Key: {v}",
    'curl -H "Authorization: token {v}" https://api.example.net/v1/me',
    'secret_key = "{v}"',
    "SECRET_KEY = '{v}'",
    'const apiKey = "{v}";',
    'String password = "{v}";',
    'apiToken := "{v}"',
    '$env:API_TOKEN = "{v}"',
    "set ACCESS_TOKEN={v}",
    "ENV NPM_TOKEN={v}",
    "docker run -e POSTGRES_PASSWORD={v} postgres:16",
    'os.environ["API_KEY"] = "{v}"',
    "private_key_passphrase = {v}",
    "auth_token: {v}",
    "client_secret={v}&grant_type=client_credentials",
    "the api token is {v}",
    "mysql -u root -p{v} app",
    "aws configure set aws_secret_access_key {v}",
    'if (password == "{v}") {{',
    'if ("{v}" === api_key) {{',
    'password "{v}";',
    'char secret[33] = "{v}";',
    'std::string secret("{v}");',
    'config.put("password", "{v}");',
    'System.setProperty("DB_PASSWORD", "{v}")',
    "ENV DB_PASSWORD {v}",
    "password: !!str {v}",
    "apiKey := `{v}`",
    'password = @"{v}";',
    "$password = '{v}';",
    "PGPASSWORD={v} psql -h db -U app",
    "sshpass -p {v} ssh deploy@host",
    "Cookie: session={v}; theme=dark",
    "define('AUTH_KEY', '{v}');",
    "define( 'NONCE_SALT', '{v}' );",
    "cat <<EOF > app.yml\npassword: {v}\nEOF",
    "cat > .env <<'EOF'\nDB_PASSWORD={v}\nEOF",
    "cat <<EOF > ~/.netrc\nmachine api.example.com login ci password {v}\nEOF",
    "cat <<EOF | docker login -u ci --password-stdin registry.example.com\n{v}\nEOF",
)

# Named values in the syntaxes of issue 28's review: a TOML or Python multi-line string, a
# .properties file's blank separator, tools that take a password as plain text (PowerShell,
# a registry login fed on standard input, the Azure and GitHub CLIs), a URL-encoded pair,
# and the short names (``PW``, ``pwd``, ``passcode``, ``master_key``). ``{u}`` is the value
# URL-encoded.
NAMED_MORE = (
    'password = """{v}"""',
    'db_password = """\n{v}\n"""',
    "secret_token = '''{v}'''",
    "spring.datasource.password {v}",
    "mail.smtp.password   {v}",
    '$cred = ConvertTo-SecureString "{v}" -AsPlainText -Force',
    "$pw = ConvertTo-SecureString -String '{v}' -AsPlainText -Force",
    "echo '{v}' | docker login -u ci --password-stdin registry.example.com",
    "printf '%s' \"{v}\" | podman login --password-stdin quay.io",
    "az login -u ci@example.com -p '{v}'",
    "az login --service-principal -u http://app -p '{v}' --tenant contoso",
    "gh secret set DEPLOY_TOKEN --body '{v}'",
    'gh secret set NPM_TOKEN -b "{v}" --repo org/app',
    "GET https://example.org/sso?next=%2Fhome&password%3D{u} 302",
    "state=login%26user%3Dci%26pwd%3D{u}",
    "PW={v}",
    "DB_PW='{v}'",
    "pwd: '{v}'",
    "Pwd={v};",
    "passcode={v}",
    '"passcode": "{v}"',
    "master_key = '{v}'",
    "MASTER_KEY={v}",
)

PROSE = (
    "Rotated the leaked credential {t} this morning, please revoke it.",
    "I think the value {t} was pasted into the channel by mistake.",
    "found {t} in the build output",
    "ERROR request failed using {t} (403)",
)
CODE = (
    'client = Client("{t}")',
    "const c = new Api('{t}');",
    "init({{ key: '{t}' }})",
    'cfg.Set("auth", "{t}")',
    "    return '{t}'",
    "headers.append(('X-Custom', '{t}'))",
)
CONFIG = (
    "value: {t}",
    'default = "{t}"',
    "  - {t}",
    "<value>{t}</value>",
    "| prod | {t} | ok |",
)
URLS = (
    "GET https://api.example.net/v1/items/{t} 200",
    "https://example.org/callback?state=ok&t={t}",
    "curl -s https://internal.example.com/fetch/{t}/latest",
)


@dataclass(frozen=True)
class Case:
    """One line (or block) that holds secrets that must not survive redaction."""

    kind: str
    family: str
    text: str
    secrets: tuple[str, ...]


@dataclass(frozen=True)
class Clean:
    """One line that holds no secret and must come out unchanged."""

    family: str
    text: str


# What a person's password holds besides letters and digits: a space, quotes and a
# backslash too (written as each syntax must write them, see ``_written``).
PASSWORD_SYMBOLS = '!@#%^*_-.:()"\\ '


def _password(rng: random.Random) -> str:
    while True:
        value = "".join(rng.choices(B62 + PASSWORD_SYMBOLS, k=rng.randint(12, 24)))
        symbols = any(c in PASSWORD_SYMBOLS for c in value)
        if _mixed(value, "A") and symbols and value == value.strip() and "  " not in value:
            return value


_NEEDS_QUOTES = frozenset(' "\\()')


def _written(syntax: str, value: str) -> tuple[str, str]:
    """The line with ``value`` written as its syntax must write it, and the value as
    written: escaped inside double quotes (``&quot;`` in an XML attribute), and quoted where
    the syntax leaves it bare but it holds a blank, a quote, a backslash or a bracket."""
    at = syntax.find("{v}")
    before = syntax[at - 1] if at > 0 else ""
    if syntax.count('"', 0, at) % 2 and before != '"':
        before = '"'  # inside a string opened earlier: ``curl -H "Authorization: token {v}"``
    if before == '"' and syntax.lstrip().startswith("<"):
        shown = value.replace('"', "&quot;")
    elif before == '"' and syntax[at - 3 : at] != '"""':
        shown = value.replace("\\", "\\\\").replace('"', '\\"')
    elif before in "'`" or syntax[at - 3 : at] == '"""' or before == ">":
        shown = value
    elif _NEEDS_QUOTES.intersection(value):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return syntax.format(v=f'"{escaped}"', u="{u}"), escaped
    else:
        shown = value
    return syntax.format(v=shown, u="{u}"), shown


def _in_connection(template: str, password: str) -> str:
    """A password as a connection string holds it: percent-encoded in a URL where it must
    be (a blank, a quote, a backslash), and without those in a keyword string."""
    if "://" in template or "jdbc:" in template:
        return password.replace(" ", "%20").replace('"', "%22").replace("\\", "%5C")
    return password.replace(" ", "_").replace('"', "_").replace("\\", "_")


# The formats whose every line is a secret (a key block's BEGIN line alone holds none).
_TOKENS = tuple(f for f in FORMATS if not f[1].startswith("-----"))


def _named_values(rng: random.Random) -> list[tuple[str, str]]:
    return [
        ("random-base62", fill("{32A}", rng)),
        ("random-hex", fill("{40h}", rng)),
        ("random-base64", fill("{40b}", rng)),
        ("password", _password(rng)),
        ("token-format", fill(rng.choice(_TOKENS)[1], rng)),
    ]


def secret_cases(seed: int = 28) -> list[Case]:
    """Every format in every kind of line, webhooks, connection strings, named values and
    this node's secret in its transforms."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for name, template in FORMATS:
        if template.startswith("-----"):
            continue  # key blocks: their own case below
        for kind, forms in (
            ("bare", ("{t}",)),
            ("prose", PROSE),
            ("code", CODE),
            ("config", CONFIG),
            ("url", URLS),
        ):
            token = fill(template, rng)
            form = rng.choice(forms)
            cases.append(Case(kind, name, form.format(t=token), (_secret_of(token),)))
    for syntax in NAMED:
        for family, value in _named_values(rng):
            line, shown = _written(syntax, value)
            cases.append(Case("named", family, line, (shown,)))
    for name, template in WEBHOOKS:
        for form in ("{t}", "SLACK_NOTIFY={t}", "curl -X POST -d @msg.json {t}",
                     "  url: {t}", "posting the report to {t} failed: 429"):  # fmt: skip
            url = fill(template, rng)
            secret = _webhook_secret(url)
            cases.append(Case("webhook", name, form.format(t=url), (secret,)))
    for name, template in CONNECTIONS:
        for form in ("{t}", 'DATABASE_URL="{t}"', "  dsn: {t}", "connecting to {t} ..."):
            password = _in_connection(template, _password(rng).replace("@", "#").replace(";", "_"))
            value = fill(template.replace("{P}", "\x00"), rng).replace("\x00", password)
            secret = password if "{P}" in template else _longest_run(value)
            cases.append(Case("connection", name, form.format(t=value), (secret,)))
    for names in (("config.json", "tls.crt"), ("app-settings", "settings.yaml")):
        values = [base64.b64encode(rng.randbytes(rng.randint(24, 60))).decode() for _ in names]
        entries = "".join(f"\n  {n}: {v}" for n, v in zip(names, values, strict=True))
        manifest = (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:{entries}"
        )
        cases.append(Case("config", "kubernetes-secret-data", manifest, tuple(values)))
    key = base64.b64encode(rng.randbytes(400)).decode()
    block = "\n".join(
        ["-----BEGIN OPENSSH PRIVATE KEY-----"]
        + [key[i : i + 70] for i in range(0, len(key), 70)]
        + ["-----END OPENSSH PRIVATE KEY-----"]
    )
    cases.append(Case("bare", "private-key-block", block, (key[70:140],)))
    more = random.Random(seed + 1)  # its own draws: the cases above keep theirs
    for syntax in NAMED_MORE:
        for family, value in _named_values(more):
            encoded = urllib.parse.quote(value, safe="")
            if "{u}" in syntax:
                cases.append(Case("named", family, syntax.format(u=encoded), (encoded,)))
                continue
            line, shown = _written(syntax, value)
            cases.append(Case("named", family, line, (shown,)))
    cases.extend(transform_cases(OWN_SECRET))
    return cases


def _secret_of(token: str) -> str:
    """The part of a token that is secret: a SAS's signature, not its version and dates."""
    return token.split("&sig=", 1)[1] if "&sig=" in token else token


def _webhook_secret(url: str) -> str:
    """The part of a webhook URL that is the credential: its longest piece of 16 characters
    or more that holds no dot (a host's name is no credential: a portal's may be longer)."""
    pieces = [p for p in _split_url(url) if len(p) >= 16]
    return max([p for p in pieces if "." not in p] or pieces, key=len)


def _split_url(url: str) -> list[str]:
    out, cur = [], ""
    for c in url:
        if c in "/?&=@:":
            out.append(cur)
            cur = ""
        else:
            cur += c
    return [*out, cur]


def _longest_run(value: str) -> str:
    runs = [r for r in value.replace("=", ";").split(";") if r]
    return max(runs, key=len)


def transform_cases(secret: str) -> list[Case]:
    """This node's secret as a step may print it to get past a plain match."""
    raw = secret.encode()
    out: list[tuple[str, str, str]] = [
        ("plain", f"using {secret} now", secret),
        ("reversed", f"+ echo {secret[::-1]}", secret[::-1]),
        ("upper", f"+ echo {secret.upper()}", secret.upper()),
        ("lower", f"value={secret.lower()} done", secret.lower()),
        ("spaced", " ".join(secret), " ".join(secret)),
        ("dotted", ".".join(secret), ".".join(secret)),
        ("folded", f"part one {secret[:13]}\n{secret[13:]} part two", secret[:13]),
        ("rot13", f"+ echo {codecs.encode(secret, 'rot13')}", codecs.encode(secret, "rot13")),
        ("unicode-escapes", "".join(f"\\u{ord(c):04x}" for c in secret), f"\\u{ord(secret[5]):04x}" * 0 + "".join(f"\\u{ord(c):04x}" for c in secret[4:12])),
        ("percent", "".join(f"%{b:02X}" for b in raw), "".join(f"%{b:02X}" for b in raw[4:12])),
        ("url-quoted", "next=" + urllib.parse.quote_plus(secret + "&x"), urllib.parse.quote_plus(secret)),
        ("json-escaped", json.dumps({"cmd": f'echo "{secret}"'}), secret),
        ("hex", raw.hex(), raw.hex()),
        ("hex-upper", raw.hex().upper(), raw.hex().upper()),
        ("hex-colons", ":".join(f"{b:02x}" for b in raw), ":".join(f"{b:02x}" for b in raw[4:12])),
        ("hex-escapes", "".join(f"\\x{b:02x}" for b in raw), "".join(f"\\x{b:02x}" for b in raw[4:12])),
        ("hex-c-array", ", ".join(f"0x{b:02x}" for b in raw), ", ".join(f"0x{b:02x}" for b in raw[4:12])),
        ("hex-dump", "\n".join(raw[i : i + 8].hex(" ") for i in range(0, len(raw), 8)), raw[8:16].hex(" ")),
        ("dashed", "-".join(secret), "-".join(secret[4:12])),
        ("base32", base64.b32encode(raw).decode().rstrip("="), base64.b32encode(raw).decode()[:32]),
    ]  # fmt: skip
    for shift in range(3):
        lead = b"user=ci;"[: 5 + shift] + b":"
        data = lead + raw + b";mode=release"
        encoded = base64.b64encode(data).decode()
        inner = _b64_inner(len(lead), len(raw), encoded)
        out.append((f"base64-offset-{shift}", f"echo {encoded} | base64 -d", inner))
        wrapped = "\n".join(encoded[i : i + 20] for i in range(0, len(encoded), 20))
        out.append((f"base64-wrapped-{shift}", wrapped, inner))
    url64 = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    out.append(("base64url", f"state={url64}", url64))
    # UTF-16LE, as PowerShell's -EncodedCommand takes a script
    wide = secret.encode("utf-16-le")
    out.append(("utf16-hex", wide.hex(), wide.hex()))
    script = "Write-Output ".encode("utf-16-le")
    encoded = base64.b64encode(script + wide).decode()
    inner = _b64_inner(len(script), len(wide), encoded)
    out.append(("utf16-base64", f"powershell -NoProfile -EncodedCommand {encoded}", inner))
    # in labelled pieces, and as ``xxd`` dumps it (offsets, hex groups, the text beside)
    third = len(secret) // 3
    pieces = (secret[:third], secret[third : 2 * third], secret[2 * third :])
    out += [
        ("labelled-halves", f"first half: {secret[:14]}\nsecond half: {secret[14:]}", secret),
        ("labelled-thirds", "\n".join(f"part {i}/3: {p}" for i, p in enumerate(pieces, 1)), secret),
        ("xxd-dump", _xxd(raw), raw.hex()),
    ]
    return [Case("transform", name, text, (needle,)) for name, text, needle in out]


def _xxd(data: bytes) -> str:
    """``data`` as ``xxd`` prints it: offset, eight groups of two bytes, the text."""
    rows = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        groups = " ".join(row[i : i + 2].hex() for i in range(0, len(row), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        rows.append(f"{at:08x}: {groups:<39}  {text}")
    return "\n".join(rows)


def _b64_inner(offset: int, size: int, encoded: str) -> str:
    """The base64 characters that encode only the secret's bytes (whole groups inside it)."""
    first_group = -(-offset // 3)
    last_group = (offset + size) // 3
    return encoded[first_group * 4 : last_group * 4]


# --- lines that hold no secret ---------------------------------------------------------


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choices("0123456789abcdef", k=n))


def _uuid(rng: random.Random) -> str:
    return fill("{uuid}", rng)


def _b64_of_text(rng: random.Random) -> str:
    texts = (
        '{"name":"web","replicas":3,"image":"nginx:1.25"}',
        "hello world, this is a build artifact manifest",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n",
        '{"alg":"none","typ":"JWT"}',
        "The quick brown fox jumps over the lazy dog " * 2,
        "#!/bin/sh\nset -eu\nmake -j4 all\n",
    )
    return base64.b64encode(rng.choice(texts).encode()).decode()


_WORDS = ("parser", "cache", "index", "worker", "session", "router", "loader", "token_stream",
          "auth_service", "keyring", "secret_store", "password_reset", "api_gateway")  # fmt: skip


def clean_lines(seed: int = 28, count: int = 1200) -> list[Clean]:
    """Lines from real code and logs that hold no secret (see the module docstring)."""
    rng = random.Random(seed)
    makers = _clean_makers()
    out: list[Clean] = []
    seen: set[str] = set()
    # Each maker once in turn, then the varied ones drawn at random: no line twice (a
    # template that draws nothing gives one line, not one per round).
    varied = [m for m in makers if m[0] in _VARIED_FAMILIES]
    for family, make in [*makers, *(rng.choice(varied) for _ in range(count * 4))]:
        line = make(rng)  # type: ignore[operator]
        if line not in seen:
            seen.add(line)
            out.append(Clean(family, line))
        if len(out) >= count:
            break
    return out + [Clean("syntax", line) for line in CLEAN_SYNTAXES]


_VARIED_FAMILIES = frozenset(
    {"log", "config", "code", "shell", "hash", "uuid", "url", "version", "base64"}
)
_COMPONENTS = (
    "scheduler", "api", "worker", "ingest", "billing", "auth", "gateway", "indexer", "mailer",
    "cache", "router", "uploader", "exporter", "migrator", "webhook", "notifier", "search",
    "reports", "sessions", "tokenizer", "keyring", "secrets-sync", "password-reset",
)  # fmt: skip
_VERBS = ("started", "finished", "retrying", "skipped", "queued", "loaded", "flushed",
          "rotated", "evicted", "validated", "connected to", "listening on", "closed")  # fmt: skip
_NOUNS = ("batch", "job", "request", "shard", "segment", "snapshot", "partition", "chunk",
          "manifest", "token bucket", "key range", "session", "lease", "checkpoint")  # fmt: skip
_SETTINGS = (
    "timeout", "max_retries", "pool_size", "log_level", "region", "replicas", "port",
    "workers", "cache_ttl", "batch_size", "key_prefix", "token_ttl", "password_min_length",
    "session_timeout", "secret_name", "api_version", "auth_mode", "key_id", "tls_enabled",
    "bucket", "queue", "endpoint", "base_url", "data_dir", "retention_days", "page_size",
)  # fmt: skip
_PATHS = ("src/app", "lib/core", "internal/auth", "pkg/store", "services/api", "cmd/tool",
          "tests/unit", "web/static", "docs/guide", "scripts/ci")  # fmt: skip
_EXTS = ("py", "go", "ts", "rs", "java", "rb", "c", "yaml", "json", "md")


def _setting_value(rng: random.Random, name: str) -> str:
    """A value a setting of that name takes that is no secret."""
    kinds = (
        lambda: str(rng.randint(1, 65535)),
        lambda: rng.choice(("true", "false", "enabled", "disabled", "auto", "strict")),
        lambda: f"{rng.randint(1, 600)}{rng.choice(('s', 'ms', 'm', 'h'))}",
        lambda: f"/var/lib/{rng.choice(_COMPONENTS)}/{rng.choice(_NOUNS).replace(' ', '_')}",
        lambda: (
            f"{rng.choice(_COMPONENTS)}.{rng.choice(('internal', 'svc.cluster.local', 'example.com'))}"
        ),
        lambda: rng.choice(("eu-west-1", "us-east-2", "ap-south-1", "westeurope")),
        lambda: f"https://{rng.choice(_COMPONENTS)}.example.org/v{rng.randint(1, 4)}/",
        lambda: rng.choice(("info", "debug", "warn", "error")),
    )
    return rng.choice(kinds)()


def _varied_makers() -> list[tuple[str, object]]:
    """Lines drawn from parts, so that no two rounds give the same line."""
    c, v, n, st = _COMPONENTS, _VERBS, _NOUNS, _SETTINGS

    def stamp(r: random.Random) -> str:
        return f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}Z"

    def path(r: random.Random) -> str:
        return f"{r.choice(_PATHS)}/{r.choice(c).replace('-', '_')}_{r.choice(n).replace(' ', '_')}.{r.choice(_EXTS)}"

    return [
        ("log", lambda r: f"{stamp(r)} {r.choice(('INFO', 'DEBUG', 'WARN'))} [{r.choice(c)}] {r.choice(v)} {r.choice(n)} {r.randint(1, 99999)} in {r.randint(1, 9999)}ms"),
        ("log", lambda r: f"[{r.choice(c)}-{r.randint(0, 9)}] {r.choice(n)} {r.randint(1, 500)}/{r.randint(500, 999)} {r.choice(v)} (attempt {r.randint(1, 5)})"),
        ("log", lambda r: f"{path(r)}:{r.randint(1, 900)}:{r.randint(1, 80)}: warning: unused variable '{r.choice(st)}'"),
        ("log", lambda r: f"PASSED {path(r)}::test_{r.choice(st)}_{r.randint(1, 40)} [{r.randint(1, 100)}%]"),
        ("log", lambda r: f"  {r.choice(('Downloading', 'Installing', 'Building wheel for'))} {r.choice(c)}-{r.randint(0, 9)}.{r.randint(0, 40)}.{r.randint(0, 9)}"),
        ("log", lambda r: f"ok  \tgithub.com/example/{r.choice(c)}/{r.choice(_PATHS).split('/')[1]}\t{r.randint(0, 9)}.{r.randint(100, 999)}s"),
        ("log", lambda r: f"Step {r.randint(1, 30)}/{r.randint(30, 40)} : RUN make -C {r.choice(_PATHS)} {r.choice(('all', 'test', 'lint', 'dist'))}"),
        ("log", lambda r: f"{r.choice(c)} | {stamp(r)} | {r.choice(v)} {r.choice(n)} id={r.randint(10**5, 10**9)} size={r.randint(1, 10**6)}B"),
        ("config", lambda r: (lambda k: f"{k}: {_setting_value(r, k)}")(r.choice(st))),
        ("config", lambda r: (lambda k: f"{k.upper()}={_setting_value(r, k)}")(r.choice(st))),
        ("config", lambda r: (lambda k: f'  "{k}": "{_setting_value(r, k)}",')(r.choice(st))),
        ("config", lambda r: (lambda k: f"{r.choice(c)}.{k} = {_setting_value(r, k)}")(r.choice(st))),
        ("code", lambda r: f"    {r.choice(st)} = config.get(\"{r.choice(st)}\", {r.randint(0, 100)})"),
        ("code", lambda r: f"def {r.choice(v).split()[0]}_{r.choice(n).replace(' ', '_')}(self, {r.choice(st)}: int = {r.randint(0, 64)}) -> None:"),
        ("code", lambda r: f"    if {r.choice(st)} > {r.randint(1, 1000)}:  # see {path(r)}"),
        ("code", lambda r: f"const {r.choice(st).title().replace('_', '')} = process.env.{r.choice(st).upper()} ?? {r.randint(1, 300)};"),
        ("code", lambda r: f"import {{ {r.choice(n).title().replace(' ', '')}Service }} from './{r.choice(c)}/{r.choice(n).replace(' ', '-')}';"),
        ("shell", lambda r: f"$ kubectl -n {r.choice(c)} rollout status deploy/{r.choice(c)} --timeout={r.randint(30, 600)}s"),
        ("shell", lambda r: f"+ docker build -t registry.example.com/{r.choice(c)}:{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)} {r.choice(_PATHS)}"),
        ("shell", lambda r: f"+ git checkout -b {r.choice(('fix', 'feat', 'chore'))}/{r.choice(c)}-{r.choice(n).replace(' ', '-')}-{r.randint(1, 999)}"),
        ("shell", lambda r: f"+ aws s3 cp s3://builds-{r.choice(c)}/{r.randint(1000, 9999)}/{r.choice(n).replace(' ', '_')}.tar.gz ./out/"),
    ]  # fmt: skip


# The syntaxes of ``NAMED_MORE`` holding a reference, a placeholder or no value, and the
# working directory's ``PWD``: none is a secret.
CLEAN_SYNTAXES = (
    'password = """${DB_PASSWORD}"""',
    'token_url = """https://auth.example.com/oauth/token"""',
    'description = """The secret is rotated every 90 days."""',
    "spring.datasource.password ${DB_PASSWORD}",
    "mail.smtp.password.file /run/secrets/smtp",
    "$cred = ConvertTo-SecureString $env:DEPLOY_PASSWORD -AsPlainText -Force",
    "$secure = ConvertTo-SecureString $encrypted",
    'echo "$REGISTRY_TOKEN" | docker login -u ci --password-stdin ghcr.io',
    'echo "${{ secrets.GITHUB_TOKEN }}" | docker login ghcr.io -u $ --password-stdin',
    'az login -u "$AZ_USER" -p "$AZ_PASSWORD"',
    "az login --identity",
    'gh secret set DEPLOY_TOKEN --body "$DEPLOY_TOKEN"',
    "gh secret set DEPLOY_KEY < deploy_key",
    "https://example.org/sso?next=%2Fhome&password%3D%24%7BPASSWORD%7D",
    "PWD=/srv/build/app",
    "pwd: /srv/app",
    'OLDPWD="/srv/build"',
    "PW=${PW}",
    "passcode_length = 6",
    "master_key_id = alias/app-master",
)


def _clean_makers() -> list[tuple[str, object]]:
    w = _WORDS
    h = _hex
    return [*_varied_makers(), *_fixed_makers(w, h)]


def _fixed_makers(w: tuple[str, ...], h: object) -> list[tuple[str, object]]:
    return [
        ("hash", lambda r: f"commit {h(r, 40)}"),
        ("hash", lambda r: f"Merge: {h(r, 7)} {h(r, 7)}"),
        ("hash", lambda r: f"{h(r, 64)}  dist/app-{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}.tar.gz"),
        ("hash", lambda r: f"sha256:{h(r, 64)}: Pull complete"),
        ("hash", lambda r: f"Digest: sha256:{h(r, 64)}"),
        ("hash", lambda r: f"{h(r, 32)}  README.md"),
        ("hash", lambda r: f"HEAD is now at {h(r, 7)} Fix flaky test in {r.choice(w)}"),
        ("hash", lambda r: f"Cache restored from key: Linux-pip-{h(r, 64)}"),
        ("hash", lambda r: f"cache key: node-cache-Linux-x64-npm-{h(r, 64)}"),
        ("hash", lambda r: f"  ETag: \"{h(r, 32)}\""),
        ("hash", lambda r: f"[INFO] Uploaded artifact {r.choice(w)}.jar (sha1 {h(r, 40)})"),
        ("uuid", lambda r: f"request_id={_uuid(r)} status=200 duration={r.randint(1, 900)}ms"),
        ("uuid", lambda r: f"  uid: {_uuid(r)}"),
        ("uuid", lambda r: f"Created job {_uuid(r)} in queue {r.choice(w)}"),
        ("uuid", lambda r: f"trace_id={h(r, 32)} span_id={h(r, 16)}"),
        ("uuid", lambda r: f"X-Request-Id: {_uuid(r)}"),
        ("uuid", lambda r: f"correlationId: \"{_uuid(r)}\""),
        ("base64", lambda r: f"echo {_b64_of_text(r)} | base64 -d"),
        ("base64", lambda r: f'  "integrity": "sha512-{base64.b64encode(r.randbytes(64)).decode()}",'),
        ("base64", lambda r: f"github.com/{r.choice(w)}/{r.choice(w)} v{r.randint(0, 3)}.{r.randint(0, 30)}.{r.randint(0, 9)} h1:{base64.b64encode(r.randbytes(32)).decode()}"),
        ("base64", lambda r: f"  config.json: {_b64_of_text(r)}"),
        ("base64", lambda r: f"Content-MD5: {base64.b64encode(r.randbytes(16)).decode()}"),
        ("base64", lambda r: f"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB{base64.b64encode(r.randbytes(24)).decode()}"),
        ("version", lambda r: f"Python {r.randint(3, 3)}.{r.randint(8, 13)}.{r.randint(0, 12)}"),
        ("version", lambda r: f"go version go1.{r.randint(18, 23)}.{r.randint(0, 9)} linux/amd64"),
        ("version", lambda r: f"Successfully installed {r.choice(w)}-{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)} urllib3-2.2.{r.randint(0, 3)}"),
        ("version", lambda r: f"npm WARN deprecated {r.choice(w)}@{r.randint(0, 9)}.{r.randint(0, 9)}.{r.randint(0, 9)}: no longer supported"),
        ("version", lambda r: f"  Compiling {r.choice(w)} v0.{r.randint(0, 30)}.{r.randint(0, 9)}"),
        ("version", lambda r: f"COMMUNICATION_API_VERSION=rc0.{r.randint(1, 20)}.0_2024{r.randint(10, 12)}{r.randint(10, 28)}_{r.randint(1000, 2359)}-SNAPSHOT"),
        ("version", lambda r: f"Using Gradle 8.{r.randint(0, 9)}.{r.randint(0, 3)}, Kotlin 1.9.{r.randint(0, 25)}, JVM 17.0.{r.randint(1, 12)}+{r.randint(1, 12)}"),
        ("version", lambda r: f"image: ghcr.io/example/{r.choice(w)}:v{r.randint(1, 4)}.{r.randint(0, 20)}.{r.randint(0, 9)}"),
        ("url", lambda r: f"https://github.com/example/{r.choice(w)}/blob/{h(r, 40)}/src/main.py#L{r.randint(1, 400)}"),
        ("url", lambda r: f"https://cdn.jsdelivr.net/npm/{r.choice(w)}@{r.randint(1, 9)}.{r.randint(0, 9)}.{r.randint(0, 9)}/dist/index.min.js"),
        ("url", lambda r: f"Downloading https://files.pythonhosted.org/packages/{h(r, 2)}/{h(r, 2)}/{h(r, 60)}/{r.choice(w)}-1.0.0-py3-none-any.whl"),
        ("url", lambda r: f"https://storage.googleapis.com/builds/{r.choice(w)}/{h(r, 40)}.tar.gz"),
        ("url", lambda r: f"see https://docs.example.com/en/stable/{r.choice(w)}.html#configuring-the-{r.choice(w)}"),
        ("url", lambda r: f"https://registry.npmjs.org/{r.choice(w)}/-/{r.choice(w)}-{r.randint(1, 9)}.{r.randint(0, 9)}.0.tgz"),
        ("url", lambda r: f"remote: https://gitlab.example.com/group/{r.choice(w)}/-/merge_requests/{r.randint(1, 9000)}"),
        ("url", lambda r: "https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX"),
        ("url", lambda r: f"https://youtube.com/watch?v={fill('{11u}', r)}"),
        ("identifier", lambda r: "key_length = XSalsa20.key_length"),
        ("identifier", lambda r: "secret_length = X25519.secret_length"),
        ("identifier", lambda r: f'foreignKey: "{r.choice(w)}_id"'),
        ("identifier", lambda r: f'"bucket_key": "reports/{r.randint(2019, 2026)}/{r.choice(w)}-{r.randint(1, 9)}.csv"'),
        ("identifier", lambda r: f"key_down_event=KeyboardEvent{r.randint(1, 300)}"),
        ("identifier", lambda r: f"PuttyPassword={r.randint(0, 1)}"),
        ("identifier", lambda r: f'<entry key="{r.choice(w)}.{r.choice(w)}.v{r.randint(1, 9)}_setting" value="enabled" />'),
        ("identifier", lambda r: "    token_type = \"Bearer\""),
        ("identifier", lambda r: f"max_tokens={r.randint(16, 8192)} temperature=0.{r.randint(0, 9)}"),
        ("identifier", lambda r: f"  secretName: {r.choice(w).replace('_', '-')}-tls"),
        ("identifier", lambda r: "  passwordPolicy: strict"),
        ("identifier", lambda r: "private final TokenService tokenService;"),
        ("identifier", lambda r: "def get_api_key(name: str) -> str:"),
        ("identifier", lambda r: "    if len(password) < MIN_PASSWORD_LENGTH:"),
        ("identifier", lambda r: "public_key = serialization.load_pem_public_key(data)"),
        ("identifier", lambda r: "apiKey: config.apiKey,"),
        ("identifier", lambda r: "client_secret = settings.CLIENT_SECRET"),
        ("identifier", lambda r: "pub const X509_pubkey_st = struct_X509_pubkey_st;"),
        ("identifier", lambda r: "token_endpoint = \"https://oauth2.googleapis.com/token\""),
        ("identifier", lambda r: "  secretRef: db-credentials"),
        ("identifier", lambda r: f"sort_key = \"{r.choice(w)}#{r.randint(1000, 9999)}\""),
        ("identifier", lambda r: f"partition_key: tenant-{r.randint(1, 999)}"),
        ("identifier", lambda r: "CancellationToken cancellationToken = default;"),
        ("identifier", lambda r: "password_hash = bcrypt.hashpw(password, bcrypt.gensalt())"),
        ("identifier", lambda r: f"[{r.choice(w)}] session_timeout = {r.randint(10, 3600)}"),
        ("identifier", lambda r: "auth_method = \"oidc\""),
        ("identifier", lambda r: f"  api_version: \"2023-{r.randint(10, 12)}-01\""),
        ("identifier", lambda r: "X-API-Name: internal-billing-api"),
        ("identifier", lambda r: f"dev.credentials.url=dev-lb{r.randint(1, 9)}.api.example.com:{r.randint(1024, 9999)}"),
        ("identifier", lambda r: "SUMO_ACCESS_KEY=${SUMO_ACCESS_KEY:=$2}"),
        ("identifier", lambda r: 'curl -sL --user "$1:$2" "$3" > "$4"'),
        ("identifier", lambda r: '"password": "<xsd:element name=\\"password\\" type=\\"xsd:string\\"/>"'),
        ("identifier", lambda r: "api_key: !Ref ApiKeyParameter"),
        ("identifier", lambda r: "password: ENC[AES256_GCM,data:Tr7o=,iv:1=,tag:2=,type:str]"),
        ("placeholder", lambda r: "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
        ("placeholder", lambda r: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("placeholder", lambda r: "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("placeholder", lambda r: "xoxb-12345-abcd234"),
        ("placeholder", lambda r: "SLACK_TOKEN=xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx"),
        ("placeholder", lambda r: "xoxe.xoxp-1-RANDOMSTRINGHERE"),
        ("placeholder", lambda r: '"token": "xoxp-572370529330-573807301142-572331691188-####################"'),
        ("placeholder", lambda r: "GR134894112312312312312312312"),
        ("placeholder", lambda r: "api_key: <your-api-key>"),
        ("placeholder", lambda r: "password: ${DB_PASSWORD}"),
        ("placeholder", lambda r: "token: ${{ secrets.GITHUB_TOKEN }}"),
        ("placeholder", lambda r: "  password: \"********\""),
        ("placeholder", lambda r: "STRIPE_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx"),
        ("placeholder", lambda r: 'api_key = "your-api-key-here"'),
        ("placeholder", lambda r: "token = \"12345678\""),
        ("placeholder", lambda r: "AIzaSyabcdefghijklmnopqrstuvwxyz1234567"),
        ("placeholder", lambda r: 'secret_key => "sk_abcdefghijklmnopqrstuvwxyz123",'),
        ("placeholder", lambda r: "password = None"),
        ("placeholder", lambda r: 'api_key = ""'),
        ("placeholder", lambda r: "export OPENAI_API_KEY=sk-..."),
        ("placeholder", lambda r: "Authorization: Bearer $TOKEN"),
        ("placeholder", lambda r: "password: true"),
        ("placeholder", lambda r: "curl -u 'test:test' https://localhost:8080/api"),
        ("placeholder", lambda r: "postgres://user:${DB_PASSWORD}@db:5432/app"),
        ("placeholder", lambda r: "password=changeme"),
        ("identifier", lambda r: f"password_auth: {r.choice(['enabled', 'disabled', 'required'])}"),
        ("identifier", lambda r: "Set-Cookie: cookie_consent=accepted; Path=/; Max-Age=31536000"),
        ("identifier", lambda r: 'password = getpass.getpass("Password: ")'),
        ("identifier", lambda r: "sqlalchemy.url = postgresql://app:%(DB_PASSWORD)s@db/app"),
        ("identifier", lambda r: '"DB_PASSWORD": "@Microsoft.KeyVault(SecretUri=https://kv-app.vault.azure.net/secrets/db-password/)"'),
        ("identifier", lambda r: f'kms_key_id = "arn:aws:kms:eu-west-1:{fill("{12D}", r)}:key/{_uuid(r)}"'),
        ("identifier", lambda r: "define('AUTH_KEY', 'put your unique phrase here');"),
        ("placeholder", lambda r: "machine api.example.com login ci password ${NETRC_PASSWORD}"),
        ("identifier", lambda r: "cat <<EOF | docker login -u ci --password-stdin\n${REGISTRY_TOKEN}\nEOF"),
        ("identifier", lambda r: f"data:\n  log_level: debug\n  checksum: {_hex(r, 40)}"),
        ("log", lambda r: f"{r.randint(10, 23)}:{r.randint(10, 59)}:{r.randint(10, 59)} INFO  Token refreshed for {r.choice(w)}, expires in {r.randint(60, 3600)}s"),
        ("log", lambda r: "Generated RSA key pair (2048 bits) for ephemeral signing"),
        ("log", lambda r: f"tests/test_{r.choice(w)}.py::test_{r.choice(w)}_{r.randint(1, 99)} PASSED"),
        ("log", lambda r: f"\tat com.example.{r.choice(w)}.TokenValidator.validate(TokenValidator.java:{r.randint(10, 400)})"),
        ("log", lambda r: f"[{r.randint(1, 99):2d}%] Building CXX object src/CMakeFiles/{r.choice(w)}.dir/key_store.cpp.o"),
        ("log", lambda r: f"web-{h(r, 10)}-{fill('{5a}', r)}   1/1   Running   0   {r.randint(1, 59)}m"),
        ("log", lambda r: f"arn:aws:iam::{fill('{12D}', r)}:role/ci-deploy"),
        ("log", lambda r: "  + id = (known after apply)"),
        ("log", lambda r: f"Run actions/checkout@{h(r, 40)}"),
        ("log", lambda r: f"The key fingerprint is SHA256:{base64.b64encode(r.randbytes(32)).decode().rstrip('=')}."),
        ("log", lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{base64.b64encode(r.randbytes(32)).decode()} ci@runner"),
        ("log", lambda r: f"Authenticated as ci-bot (id {r.randint(10000, 99999)}) with scopes repo, workflow"),
        ("log", lambda r: f"pk_live_{fill('{24A}', r)}"),
        ("log", lambda r: f"Stripe.setPublishableKey('pk_test_{fill('{24A}', r)}')"),
        ("log", lambda r: f"copy xoxo-party-photos-{r.randint(2015, 2025)}.jpg to /srv/media"),
        ("log", lambda r: f"TASK{h(r, 32)} finished"),
        ("log", lambda r: f"2026-11-{r.randint(10, 28)}T{r.randint(10, 23)}:{r.randint(10, 59)}:00Z session={r.choice(w)} key=F{r.randint(1, 12)} pressed"),
    ]  # fmt: skip
