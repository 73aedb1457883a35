"""Write the planted-secret sets that ``bench_redaction.py`` and ``tests/security/`` score redaction on.

Two sets, both fake (random values in the shapes of real formats, never real credentials):

* ``tests/security/planted_secrets_heldout.json``: 120+ formats in eight families (cloud, CI,
  chat, database DSNs and command lines, tokens in URLs and cookies, key material, seed phrases,
  prose passwords), each inside a sentence of English, Ukrainian, Russian, German or Polish. Written
  before the rules of docs/adr/0053 were tuned and not looked at while tuning.
* ``tests/security/planted_secrets_dev.json``: the development set the rules were tuned on: the
  formats issue 22 names, with other values and other sentences, and variants of the same families.

Each case is ``{"id", "family", "format", "lang", "text", "secrets"}``: ``secrets`` are the
substrings that must not survive redaction (scored by ``bench_redaction.leaked``). Run
``python benchmarks/make_planted_secrets.py`` to rewrite both files (the seeds are fixed, so the
output is the same on every run).
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "security"

B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"
BIP39 = (
    "abandon ability able about above absent absorb abstract absurd abuse access accident account accuse "
    "achieve acid acoustic acquire across act action actor actress actual adapt add addict address adjust "
    "admit adult advance advice aerobic affair afford afraid again age agent agree ahead aim air airport "
    "aisle alarm album alcohol alert alien all alley allow almost alone alpha already also alter always "
    "amateur amazing among amount amused analyst anchor ancient anger angle angry animal ankle announce "
    "annual another answer antenna antique anxiety any apart apology appear apple approve april arch "
    "arctic area arena argue arm armed armor army around arrange arrest arrive arrow art artefact artist "
    "artwork ask aspect assault asset assist assume asthma athlete atom attack attend attitude attract "
    "auction audit august aunt author auto autumn average avocado avoid awake aware away awesome awful "
    "awkward axis baby bachelor bacon badge bag balance balcony ball bamboo banana banner bar barely "
    "bargain barrel base basic basket battle beach bean beauty because become beef before begin behave "
    "behind believe below belt bench benefit best betray better between beyond bicycle bid bike bind "
    "biology bird birth bitter black blade blame blanket blast bleak bless blind blood blossom blouse "
    "blue blur blush board boat body boil bomb bone bonus book boost border boring borrow boss bottom "
    "bounce box boy bracket brain brand brass brave bread breeze brick bridge brief bright bring brisk "
    "broccoli broken bronze broom brother brown brush bubble buddy budget buffalo build bulb bulk bullet "
    "bundle bunker burden burger burst bus business busy butter buyer buzz cabbage cabin cable cactus"
).split()


class Gen:
    """Random pieces of secrets, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def b64(self, n: int) -> str:
        return self.pick(B64, n)

    def url(self, n: int) -> str:
        return self.pick(URLSAFE, n)

    def alnum(self, n: int) -> str:
        return self.pick(ALNUM, n)

    def hex(self, n: int) -> str:
        return self.pick(HEX, n)

    def digits(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + self.pick(string.digits, n - 1)

    def password(self, n: int = 12, symbols: str = "!#$%^*+-_.~") -> str:
        parts = [self.r.choice(string.ascii_lowercase), self.r.choice(string.ascii_uppercase),
                 self.r.choice(string.digits), self.r.choice(symbols)]
        parts += [self.r.choice(ALNUM + symbols) for _ in range(n - 4)]
        self.r.shuffle(parts)
        return "".join(parts)

    def plain_password(self, n: int = 10) -> str:
        """Letters and digits only, like a generated password without symbols."""
        while True:
            word = self.alnum(n)
            if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
                return word

    def words(self, n: int) -> str:
        return " ".join(self.r.choice(BIP39) for _ in range(n))

    def uuid(self) -> str:
        h = self.hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def jwt(self) -> str:
        head = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
        body = "eyJ" + self.url(self.r.randint(60, 120))
        return f"{head}.{body}.{self.url(86)}"

    def pem_body(self, lines: int = 6) -> list[str]:
        return ["MII" + self.b64(61)] + [self.b64(64) for _ in range(lines - 1)] + [self.b64(24) + "=="]


# Sentences around a secret, per language; {x} is where the secret (or its command line) goes.
FRAMES = {
    "en": [
        "Can you check why the deploy fails? I ran {x} and it still says access denied.",
        "For the record, the staging setup uses {x} until we rotate it next sprint.",
        "Here is what the runbook says:\n{x}\nDoes that look right to you?",
    ],
    "uk": [
        "Подивись, будь ласка, чому деплой падає: я запустив {x} і все одно бачу відмову в доступі.",
        "Для стенду зараз використовуємо {x}, поки не змінимо в наступному спринті.",
        "Ось що написано в інструкції:\n{x}\nЦе правильно?",
    ],
    "ru": [
        "Посмотри, почему падает выкладка: я выполнил {x} и всё равно получаю отказ в доступе.",
        "На тестовом стенде пока используем {x}, до ротации в следующем спринте.",
        "Вот что написано в регламенте:\n{x}\nЭто верно?",
    ],
    "de": [
        "Kannst du prüfen, warum das Deployment scheitert? Ich habe {x} ausgeführt und bekomme trotzdem Zugriff verweigert.",
        "Die Staging-Umgebung nutzt vorerst {x}, bis wir im nächsten Sprint rotieren.",
        "So steht es im Betriebshandbuch:\n{x}\nStimmt das so?",
    ],
    "pl": [
        "Sprawdzisz, dlaczego wdrożenie się wywala? Uruchomiłem {x} i dalej jest odmowa dostępu.",
        "Środowisko testowe używa na razie {x}, dopóki nie zrotujemy w następnym sprincie.",
        "Tak jest w instrukcji:\n{x}\nCzy to się zgadza?",
    ],
}
LANGS = ("en", "uk", "ru", "de", "pl")

# A format: (family, name, maker); maker(g) returns (snippet, secrets) or (snippet, secrets, lang)
# when the snippet is itself prose in one language (then no frame is put around it).
Format = tuple[str, str, Callable[[Gen], tuple]]


def heldout_formats() -> list[Format]:
    f: list[Format] = []

    def add(family: str, name: str) -> Callable[[Callable[[Gen], tuple]], Callable[[Gen], tuple]]:
        def wrap(maker: Callable[[Gen], tuple]) -> Callable[[Gen], tuple]:
            f.append((family, name, maker))
            return maker
        return wrap

    # ---------------------------------------------------------------- cloud
    @add("cloud", "aws credentials file")
    def _(g: Gen) -> tuple:
        k, s = "AKIA" + g.pick(string.ascii_uppercase + "234567", 16), g.b64(40)
        return f"[prod]\naws_access_key_id = {k}\naws_secret_access_key = {s}", [k, s]

    @add("cloud", "aws secret in env")
    def _(g: Gen) -> tuple:
        s = g.b64(40)
        return f"AWS_SECRET_ACCESS_KEY={s} terraform apply", [s]

    @add("cloud", "aws session token")
    def _(g: Gen) -> tuple:
        s = "IQoJb3JpZ2luX2Vj" + g.b64(300)
        return f"export AWS_SESSION_TOKEN={s}", [s]

    @add("cloud", "aws presigned s3 url")
    def _(g: Gen) -> tuple:
        k, sig = "ASIA" + g.pick(string.ascii_uppercase + "234567", 16), g.hex(64)
        tok = g.b64(120).replace("+", "%2B").replace("/", "%2F")
        url = (f"https://mission-artifacts.s3.eu-central-1.amazonaws.com/reports/q3.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
               f"&X-Amz-Credential={k}%2F20261130%2Feu-central-1%2Fs3%2Faws4_request&X-Amz-Date=20261130T101500Z"
               f"&X-Amz-Expires=3600&X-Amz-Security-Token={tok}&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}")
        return url, [sig, k, tok]

    @add("cloud", "azure sas url sig=")
    def _(g: Gen) -> tuple:
        sig = g.b64(43).replace("+", "%2B").replace("/", "%2F") + "%3D"
        return (f"https://missionlogs.blob.core.windows.net/exports?sv=2022-11-02&ss=b&srt=co&sp=rl"
                f"&se=2026-12-31T23:59:59Z&st=2026-11-01T00:00:00Z&spr=https&sig={sig}"), [sig]

    @add("cloud", "azure storage connection string")
    def _(g: Gen) -> tuple:
        s = g.b64(86) + "=="
        return (f"DefaultEndpointsProtocol=https;AccountName=missionlogs;AccountKey={s};"
                "EndpointSuffix=core.windows.net"), [s]

    @add("cloud", "az login -p")
    def _(g: Gen) -> tuple:
        p = g.password(14)
        return f"az login -u ops@contoso.onmicrosoft.com -p '{p}'", [p]

    @add("cloud", "az login service principal")
    def _(g: Gen) -> tuple:
        p = g.alnum(3) + "8Q~" + g.url(34)
        return f"az login --service-principal -u {g.uuid()} -p {p} --tenant {g.uuid()}", [p]

    @add("cloud", "gcp service account json")
    def _(g: Gen) -> tuple:
        body = g.pem_body(5)
        key = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(body) + "\\n-----END PRIVATE KEY-----\\n"
        kid = g.hex(40)
        return ('{"type": "service_account", "project_id": "mission-ops", "private_key_id": "' + kid
                + '", "private_key": "' + key + '"}'), [kid, *body]

    @add("cloud", "google api key")
    def _(g: Gen) -> tuple:
        k = "AIza" + g.url(35)
        return f"maps key {k}", [k]

    @add("cloud", "google oauth client secret")
    def _(g: Gen) -> tuple:
        k = "GOCSPX-" + g.url(28)
        return f"client_id=1234.apps.googleusercontent.com client secret GOCSPX: {k}", [k]

    @add("cloud", "digitalocean token")
    def _(g: Gen) -> tuple:
        k = "dop_v1_" + g.hex(64)
        return f"doctl auth init -t {k}", [k]

    @add("cloud", "heroku api key (uuid)")
    def _(g: Gen) -> tuple:
        k = g.uuid()
        return f"HEROKU_API_KEY={k}", [k]

    @add("cloud", "alibaba access key")
    def _(g: Gen) -> tuple:
        k, s = "LTAI" + g.alnum(20), g.alnum(30)
        return f"aliyun configure set --access-key-id {k} --access-key-secret {s}", [k, s]

    @add("cloud", "cloudflare api token")
    def _(g: Gen) -> tuple:
        k = g.url(40)
        return f"CLOUDFLARE_API_TOKEN={k}", [k]

    @add("cloud", "hcloud token")
    def _(g: Gen) -> tuple:
        k = g.alnum(64)
        return f"hcloud context create prod  # token {k}", [k]

    @add("cloud", "ibmcloud apikey")
    def _(g: Gen) -> tuple:
        k = g.url(44)
        return f"ibmcloud login --apikey {k} -r eu-de", [k]

    @add("cloud", "terraform cloud token")
    def _(g: Gen) -> tuple:
        k = g.alnum(14) + ".atlasv1." + g.alnum(67)
        return f'credentials "app.terraform.io" {{ token = "{k}" }}', [k]

    @add("cloud", "vault hvs token")
    def _(g: Gen) -> tuple:
        k = "hvs." + g.url(24)
        return f"VAULT_ADDR=https://vault.internal:8200 vault kv get -address=$VAULT_ADDR secret/db with {k}", [k]

    @add("cloud", "vault batch token hvb")
    def _(g: Gen) -> tuple:
        k = "hvb.AAAAAQ" + g.url(90)
        return f"X-Vault-Token: {k}", [k]

    @add("cloud", "vault userpass login")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"vault login -method=userpass username=deployer password={p}", [p]

    @add("cloud", "doppler service token")
    def _(g: Gen) -> tuple:
        k = "dp.st.prd." + g.alnum(43)
        return f"doppler run --token {k} -- ./start.sh", [k]

    @add("cloud", "scaleway secret key")
    def _(g: Gen) -> tuple:
        k = g.uuid()
        return f"SCW_SECRET_KEY={k}", [k]

    # ---------------------------------------------------------------- CI
    @add("ci", "gitlab runner glrt-")
    def _(g: Gen) -> tuple:
        k = "glrt-" + g.url(20)
        return f"gitlab-runner register --url https://gitlab.example.com --token {k}", [k]

    @add("ci", "gitlab pat in header")
    def _(g: Gen) -> tuple:
        k = "glpat-" + g.url(20)
        return f'curl --header "PRIVATE-TOKEN: {k}" https://gitlab.example.com/api/v4/projects', [k]

    @add("ci", "github fine-grained pat")
    def _(g: Gen) -> tuple:
        k = "github_pat_11" + g.alnum(20) + "_" + g.alnum(59)
        return f"gh auth login --with-token <<< {k}", [k]

    @add("ci", "github actions ghs_")
    def _(g: Gen) -> tuple:
        k = "ghs_" + g.alnum(36)
        return f"the installation token was {k}", [k]

    @add("ci", "circleci token (40 hex)")
    def _(g: Gen) -> tuple:
        k = g.hex(40)
        return f"CIRCLE_TOKEN={k}", [k]

    @add("ci", "jenkins api token via curl -u")
    def _(g: Gen) -> tuple:
        k = "11" + g.hex(32)
        return f"curl -X POST -u admin:{k} https://jenkins.internal/job/deploy/build", [k]

    @add("ci", "npmrc authToken")
    def _(g: Gen) -> tuple:
        k = "npm_" + g.alnum(36)
        return f"//registry.npmjs.org/:_authToken={k}", [k]

    @add("ci", "pypi token")
    def _(g: Gen) -> tuple:
        k = "pypi-AgEIcHlwaS5vcmc" + g.url(60)
        return f"twine upload -u __token__ -p {k} dist/*", [k]

    @add("ci", "docker hub pat")
    def _(g: Gen) -> tuple:
        k = "dckr_pat_" + g.url(27)
        return f"DOCKERHUB_TOKEN: {k}", [k]

    @add("ci", "docker login -p")
    def _(g: Gen) -> tuple:
        p = g.password(14)
        return f"docker login -u deploybot -p {p} registry.example.com", [p]

    @add("ci", "docker config auth")
    def _(g: Gen) -> tuple:
        k = g.b64(40) + "=="
        return '{"auths": {"registry.example.com": {"auth": "' + k + '"}}}', [k]

    @add("ci", "buildkite token")
    def _(g: Gen) -> tuple:
        k = "bkua_" + g.hex(40)
        return f"BUILDKITE_API_TOKEN {k}", [k]

    @add("ci", "sonar token")
    def _(g: Gen) -> tuple:
        k = "sqp_" + g.hex(40)
        return f"mvn sonar:sonar -Dsonar.login={k}", [k]

    @add("ci", "kubectl set-credentials --token")
    def _(g: Gen) -> tuple:
        k = g.jwt()
        return f"kubectl config set-credentials ci --token={k}", [k.split(".")[1], k.split(".")[2]]

    @add("ci", "kubeconfig client-key-data")
    def _(g: Gen) -> tuple:
        k = "LS0tLS1CRUdJTi" + g.b64(200) + "="
        return f"users:\n- name: admin\n  user:\n    client-key-data: {k}", [k]

    @add("ci", "atlassian api token")
    def _(g: Gen) -> tuple:
        k = "ATATT3xFfGF0" + g.url(180) + "=" + g.hex(8).upper()
        return f"JIRA_API_TOKEN={k}", [k]

    @add("ci", "helm repo add --password")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"helm repo add internal https://charts.internal --username ci --password {p}", [p]

    @add("ci", "gitlab trigger token glptt-")
    def _(g: Gen) -> tuple:
        k = "glptt-" + g.hex(40)
        return f"curl -X POST -F token={k} -F ref=main https://gitlab.example.com/api/v4/projects/7/trigger/pipeline", [k]

    # ---------------------------------------------------------------- chat
    @add("chat", "slack bot token")
    def _(g: Gen) -> tuple:
        k = f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.alnum(24)}"
        return f"SLACK_BOT_TOKEN={k}", [k]

    @add("chat", "slack webhook")
    def _(g: Gen) -> tuple:
        k = f"T{g.pick(string.ascii_uppercase + string.digits, 8)}/B{g.pick(string.ascii_uppercase + string.digits, 10)}/{g.alnum(24)}"
        return f"https://hooks.slack.com/services/{k}", [k.split("/")[-1]]

    @add("chat", "discord bot token")
    def _(g: Gen) -> tuple:
        k = "MT" + g.alnum(24) + "." + g.url(6) + "." + g.url(38)
        return f"client.run('{k}')", [k]

    @add("chat", "discord bot token in authorization")
    def _(g: Gen) -> tuple:
        k = "OD" + g.alnum(22) + "." + g.url(6) + "." + g.url(27)
        return f"Authorization: Bot {k}", [k]

    @add("chat", "discord webhook")
    def _(g: Gen) -> tuple:
        k = g.digits(19) + "/" + g.url(68)
        return f"https://discord.com/api/webhooks/{k}", [k.split("/")[1]]

    @add("chat", "telegram bot token")
    def _(g: Gen) -> tuple:
        k = g.digits(10) + ":AA" + g.url(33)
        return f"TELEGRAM_BOT_TOKEN={k}", [k.split(":")[1]]

    @add("chat", "telegram bot token bare")
    def _(g: Gen) -> tuple:
        k = g.digits(10) + ":AA" + g.url(33)
        return f"bot = telebot.TeleBot('{k}')", [k.split(":")[1]]

    @add("chat", "teams webhook")
    def _(g: Gen) -> tuple:
        k = f"{g.uuid()}@{g.uuid()}/IncomingWebhook/{g.hex(32)}/{g.uuid()}"
        return f"https://contoso.webhook.office.com/webhookb2/{k}", [k.split("/")[2]]

    @add("chat", "mattermost webhook")
    def _(g: Gen) -> tuple:
        k = g.pick(LOWER_ALNUM, 26)
        return f"curl -X POST -d @msg.json https://chat.example.com/hooks/{k}", [k]

    @add("chat", "twilio auth token")
    def _(g: Gen) -> tuple:
        sid, tok = "AC" + g.hex(32), g.hex(32)
        return f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}", [tok]

    @add("chat", "sendgrid key")
    def _(g: Gen) -> tuple:
        k = "SG." + g.url(22) + "." + g.url(43)
        return f"sendgrid api key {k}", [k]

    @add("chat", "mailgun key")
    def _(g: Gen) -> tuple:
        k = "key-" + g.hex(32)
        return f"curl -s --user 'api:{k}' https://api.mailgun.net/v3/mg.example.com/messages", [k]

    @add("chat", "matrix access token")
    def _(g: Gen) -> tuple:
        k = "syt_" + g.alnum(12) + "_" + g.alnum(20) + "_" + g.alnum(6)
        return f"matrix-commander --access-token {k}", [k]

    @add("chat", "pagerduty integration key")
    def _(g: Gen) -> tuple:
        k = g.hex(32)
        return f'"routing_key": "{k}"', [k]

    # ---------------------------------------------------------------- database DSNs and command lines
    @add("database", "postgres url")
    def _(g: Gen) -> tuple:
        p = g.password(14)
        return f"postgresql://mission:{p}@db.internal:5432/memory", [p]

    @add("database", "url password containing /")
    def _(g: Gen) -> tuple:
        p = g.alnum(5) + "/" + g.alnum(4) + "/" + g.alnum(5)
        return f"mongodb://ops:{p}@mongo-1.internal:27017/admin", [p]

    @add("database", "go mysql dsn")
    def _(g: Gen) -> tuple:
        p = g.password(12, "!#%^*-_.~")
        return f'dsn := "app:{p}@tcp(mysql.internal:3306)/orders?parseTime=true"', [p]

    @add("database", "pgpass line")
    def _(g: Gen) -> tuple:
        p = g.password(14, "!#%^*-_.~")
        return f"~/.pgpass:\ndb.internal:5432:memory:mission:{p}", [p]

    @add("database", "pgpass line with wildcard")
    def _(g: Gen) -> tuple:
        p = g.plain_password(16)
        return f"*:*:*:replicator:{p}", [p]

    @add("database", "PGPASSWORD env")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"PGPASSWORD='{p}' psql -h db.internal -U mission", [p]

    @add("database", "libpq keyword dsn")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f'psql "host=db.internal user=mission password={p} dbname=memory"', [p]

    @add("database", "jdbc sqlserver")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"jdbc:sqlserver://sql.internal:1433;databaseName=ops;user=sa;password={p};encrypt=true", [p]

    @add("database", "ado.net connection string")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"Server=tcp:sql.internal,1433;Database=ops;User Id=svc_ops;Pwd={p};", [p]

    @add("database", "sqlplus user/pass@")
    def _(g: Gen) -> tuple:
        p = g.plain_password(11)
        return f"sqlplus system/{p}@//ora.internal:1521/ORCLPDB1", [p]

    @add("database", "sqlcmd -P")
    def _(g: Gen) -> tuple:
        p = g.password(14)
        return f"sqlcmd -S sql.internal -U sa -P '{p}' -Q 'SELECT 1'", [p]

    @add("database", "mysql --password=")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"mysql --user=root --password={p} -h 10.0.0.5", [p]

    @add("database", "mysqldump -u -p'…'")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"mysqldump -uroot -p'{p}' orders > orders.sql", [p]

    @add("database", "redis url empty user")
    def _(g: Gen) -> tuple:
        p = g.plain_password(20)
        return f"REDIS_URL=redis://:{p}@cache.internal:6379/0", [p]

    @add("database", "ldapsearch -w")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f'ldapsearch -x -H ldap://dc1.internal -D "cn=admin,dc=corp,dc=local" -w {p} -b "dc=corp,dc=local"', [p]

    @add("database", "smbclient -U user%pass")
    def _(g: Gen) -> tuple:
        p = g.password(12, "!#$^*-_.~")
        return f"smbclient //fs1.internal/share -U backup%{p}", [p]

    @add("database", "openssl -passout pass:")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{p}", [p]

    @add("database", "openssl -passin pass:")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"openssl rsa -in enc.key -passin pass:{p} -out plain.key", [p]

    @add("database", "mongodb+srv")
    def _(g: Gen) -> tuple:
        p = g.plain_password(16)
        return f'mongosh "mongodb+srv://analyst:{p}@cluster0.ab12c.mongodb.net/ops"', [p]

    @add("database", "rabbitmqctl change_password")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"rabbitmqctl change_password admin {p}", [p]

    @add("database", "net use /user")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"net use Z: \\\\fs1\\share /user:CORP\\svc_backup {p}", [p]

    @add("database", "xfreerdp /p:")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"xfreerdp /v:jump.internal /u:Administrator /p:{p} /cert:ignore", [p]

    @add("database", "ftp url")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"ftp://uploader:{p}@ftp.example.com/incoming/", [p]

    @add("database", "influx -password")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"influx -username admin -password {p} -host tsdb.internal", [p]

    @add("database", "keytool -storepass")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"keytool -importcert -keystore truststore.jks -storepass {p} -file ca.pem", [p]

    @add("database", "cqlsh -p")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"cqlsh cass1.internal -u cassandra -p {p}", [p]

    @add("database", "mssql sa password env")
    def _(g: Gen) -> tuple:
        p = g.password(14)
        return f'docker run -e "ACCEPT_EULA=Y" -e "MSSQL_SA_PASSWORD={p}" mcr.microsoft.com/mssql/server', [p]

    @add("database", "clickhouse-client --password")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"clickhouse-client --host ch.internal --user default --password '{p}'", [p]

    @add("database", "ssh with sshpass -p")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"sshpass -p '{p}' ssh root@10.0.0.9", [p]

    @add("database", "x-api-key header")
    def _(g: Gen) -> tuple:
        k = g.alnum(40)
        return f'curl -H "X-API-Key: {k}" https://api.example.com/v1/items', [k]

    @add("database", "yaml password field")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"datasource:\n  url: jdbc:postgresql://db:5432/app\n  username: app\n  password: {p}", [p]

    # ---------------------------------------------------------------- tokens in URLs and cookies
    @add("url-cookie", "access_token in url")
    def _(g: Gen) -> tuple:
        k = g.url(40)
        return f"https://api.example.com/v2/export?format=csv&access_token={k}&page=2", [k]

    @add("url-cookie", "api_key in url")
    def _(g: Gen) -> tuple:
        k = g.hex(32)
        return f"https://api.weather.example/data?q=Kyiv&appid={k}", [k]

    @add("url-cookie", "django session cookie")
    def _(g: Gen) -> tuple:
        k = g.pick(LOWER_ALNUM, 32)
        return f"Cookie: csrftoken=abc; sessionid={k}", [k]

    @add("url-cookie", "express connect.sid")
    def _(g: Gen) -> tuple:
        k = "s%3A" + g.url(32) + "." + g.url(43)
        return f"Set-Cookie: connect.sid={k}; Path=/; HttpOnly", [k]

    @add("url-cookie", "PHPSESSID")
    def _(g: Gen) -> tuple:
        k = g.pick(LOWER_ALNUM, 26)
        return f"curl -b 'PHPSESSID={k}' https://intranet.example.com/admin", [k]

    @add("url-cookie", "gitlab session cookie")
    def _(g: Gen) -> tuple:
        k = g.hex(32)
        return f"Cookie: _gitlab_session={k}", [k]

    @add("url-cookie", "JSESSIONID")
    def _(g: Gen) -> tuple:
        k = g.hex(32).upper()
        return f"JSESSIONID={k}; Path=/app", [k]

    @add("url-cookie", "sentry dsn")
    def _(g: Gen) -> tuple:
        k = g.hex(32)
        return f"SENTRY_DSN=https://{k}@o{g.digits(6)}.ingest.sentry.io/{g.digits(7)}", [k]

    @add("url-cookie", "sentry dsn in code")
    def _(g: Gen) -> tuple:
        k = g.hex(32)
        return f'sentry_sdk.init(dsn="https://{k}@sentry.internal.example/12")', [k]

    @add("url-cookie", "git remote x-access-token")
    def _(g: Gen) -> tuple:
        k = "ghs_" + g.alnum(36)
        return f"git clone https://x-access-token:{k}@github.com/org/repo.git", [k]

    @add("url-cookie", "git remote oauth2 glpat")
    def _(g: Gen) -> tuple:
        k = "glpat-" + g.url(20)
        return f"git remote set-url origin https://oauth2:{k}@gitlab.com/group/app.git", [k]

    @add("url-cookie", "url-encoded password")
    def _(g: Gen) -> tuple:
        p = g.alnum(6) + "%40" + g.alnum(5) + "%23"
        return f"amqp://worker:{p}@mq.internal:5672/", [p]

    @add("url-cookie", "gcs signed url")
    def _(g: Gen) -> tuple:
        sig = g.hex(512)
        return (f"https://storage.googleapis.com/mission-bucket/a.tar?X-Goog-Algorithm=GOOG4-RSA-SHA256"
                f"&X-Goog-Credential=svc%40proj.iam.gserviceaccount.com%2F20261130%2Fauto%2Fstorage%2Fgoog4_request"
                f"&X-Goog-Date=20261130T101500Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={sig}"), [sig]

    @add("url-cookie", "jupyter token url")
    def _(g: Gen) -> tuple:
        k = g.hex(48)
        return f"http://127.0.0.1:8888/lab?token={k}", [k]

    @add("url-cookie", "x-auth-token header")
    def _(g: Gen) -> tuple:
        k = g.url(48)
        return f"X-Auth-Token: {k}", [k]

    @add("url-cookie", "proxy-authorization basic")
    def _(g: Gen) -> tuple:
        k = g.b64(32) + "="
        return f"Proxy-Authorization: Basic {k}", [k]

    @add("url-cookie", "cloudfront signed cookie")
    def _(g: Gen) -> tuple:
        k = g.url(170) + "__"
        return f"Cookie: CloudFront-Key-Pair-Id=K2JCJMDEHXQW5F; CloudFront-Signature={k}", [k]

    # ---------------------------------------------------------------- key material
    @add("key-material", "pem rsa key")
    def _(g: Gen) -> tuple:
        body = g.pem_body(8)
        return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----", body

    @add("key-material", "pem with re-spaced armour")
    def _(g: Gen) -> tuple:
        body = g.pem_body(6)
        return "----- BEGIN RSA PRIVATE KEY -----\n" + "\n".join(body) + "\n----- END RSA PRIVATE KEY -----", body

    @add("key-material", "pem armour on one line")
    def _(g: Gen) -> tuple:
        body = g.pem_body(4)
        return "-----BEGIN EC PRIVATE KEY----- " + " ".join(body) + " -----END EC PRIVATE KEY-----", body

    @add("key-material", "openssh private key")
    def _(g: Gen) -> tuple:
        body = ["b3BlbnNzaC1rZXktdjEAAAAA" + g.b64(46)] + [g.b64(70) for _ in range(5)]
        return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----", body

    @add("key-material", "pgp private key block")
    def _(g: Gen) -> tuple:
        body = ["lQdGBF" + g.b64(58)] + [g.b64(64) for _ in range(5)]
        return ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(body) + "\n=" + g.b64(4)
                + "\n-----END PGP PRIVATE KEY BLOCK-----"), body

    @add("key-material", "encrypted pkcs8 pem, armour cut")
    def _(g: Gen) -> tuple:
        body = g.pem_body(5)
        return "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + "\n".join(body), body

    @add("key-material", "jwt wrapped over two lines")
    def _(g: Gen) -> tuple:
        k = g.jwt()
        cut = len(k) // 2
        return f"token: {k[:cut]}\n{k[cut:]}", [k[20:cut], k[cut:]]

    @add("key-material", "jwt in prose")
    def _(g: Gen) -> tuple:
        k = g.jwt()
        return f"the id_token {k} expired", [k.split(".")[1], k.split(".")[2]]

    @add("key-material", "totp otpauth uri")
    def _(g: Gen) -> tuple:
        s = g.pick(BASE32, 32)
        return f"otpauth://totp/Mission:ops@example.com?secret={s}&issuer=Mission&digits=6", [s]

    @add("key-material", "totp seed in prose")
    def _(g: Gen) -> tuple:
        s = " ".join(g.pick(BASE32, 4) for _ in range(8)).lower()
        return f"2FA setup key: {s}", [s]

    @add("key-material", "age secret key")
    def _(g: Gen) -> tuple:
        s = "AGE-SECRET-KEY-1" + g.pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
        return f"# created: 2026-11-30\n{s}", [s]

    @add("key-material", "wireguard private key")
    def _(g: Gen) -> tuple:
        s = g.b64(43) + "="
        return f"[Interface]\nPrivateKey = {s}\nAddress = 10.8.0.2/24", [s]

    @add("key-material", "putty private lines")
    def _(g: Gen) -> tuple:
        body = [g.b64(64) for _ in range(4)]
        return ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\nPrivate-Lines: 4\n"
                + "\n".join(body) + "\nPrivate-MAC: " + g.hex(64)), body

    @add("key-material", "ethereum private key")
    def _(g: Gen) -> tuple:
        s = "0x" + g.hex(64)
        return f"wallet private key {s}", [s[2:]]

    @add("key-material", "bitcoin wif key")
    def _(g: Gen) -> tuple:
        s = "5" + g.pick("HJK", 1) + g.pick("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 49)
        return f"import the WIF {s} into the cold wallet", [s]

    @add("key-material", "django secret key")
    def _(g: Gen) -> tuple:
        s = "django-insecure-" + g.pick(string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)", 50)
        return f"SECRET_KEY = '{s}'", [s]

    @add("key-material", "fernet key")
    def _(g: Gen) -> tuple:
        s = g.url(43) + "="
        return f"FERNET_KEY={s}", [s]

    @add("key-material", "ssh-keygen -N passphrase")
    def _(g: Gen) -> tuple:
        p = g.password(14)
        return f"ssh-keygen -t ed25519 -N '{p}' -f ~/.ssh/deploy", [p]

    # ---------------------------------------------------------------- seed phrases
    @add("seed-phrase", "bip39 12 words en")
    def _(g: Gen) -> tuple:
        s = g.words(12)
        return f"My wallet recovery phrase is {s} — keep it safe.", [s], "en"

    @add("seed-phrase", "bip39 24 words uk")
    def _(g: Gen) -> tuple:
        s = g.words(24)
        return f"Сід-фраза гаманця: {s}", [s], "uk"

    @add("seed-phrase", "bip39 12 words ru")
    def _(g: Gen) -> tuple:
        s = g.words(12)
        return f"Мнемоническая фраза от кошелька — {s}", [s], "ru"

    @add("seed-phrase", "bip39 mnemonic json")
    def _(g: Gen) -> tuple:
        s = g.words(12)
        return '{"network": "mainnet", "mnemonic": "' + s + '"}', [s], "en"

    @add("seed-phrase", "bip39 18 words de")
    def _(g: Gen) -> tuple:
        s = g.words(18)
        return f"Die Wiederherstellungsphrase lautet: {s}", [s], "de"

    @add("seed-phrase", "bip39 numbered list")
    def _(g: Gen) -> tuple:
        words = g.words(12).split()
        s = "\n".join(f"{i + 1}. {w}" for i, w in enumerate(words))
        return f"seed words:\n{s}", [" ".join(words[:4]), " ".join(words[4:8])], "en"

    # ---------------------------------------------------------------- prose passwords
    @add("prose", "en wifi password is")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"The guest wifi password is {p} if you need it in the lab.", [p], "en"

    @add("prose", "en login / pass")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"Grafana login admin, pass {p}", [p], "en"

    @add("prose", "en pw:")
    def _(g: Gen) -> tuple:
        p = g.plain_password(12)
        return f"jump host root pw: {p}", [p], "en"

    @add("prose", "en passcode")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"the alarm panel passcode is {p}", [p], "en"

    @add("prose", "uk Гасло:")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"Гасло: {p}", [p], "uk"

    @add("prose", "uk гасло до")
    def _(g: Gen) -> tuple:
        p = g.password(11)
        return f"гасло до адмінки Jenkins — {p}, не поширюй", [p], "uk"

    @add("prose", "uk пароль до бази")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"Пароль до бази на проді {p}, зміни після релізу.", [p], "uk"

    @add("prose", "uk ось токен")
    def _(g: Gen) -> tuple:
        p = g.alnum(32)
        return f"Ось токен доступу до API: {p}", [p], "uk"

    @add("prose", "uk код доступу")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"Код доступу до сховища: {p}", [p], "uk"

    @add("prose", "ru пароль от сервера")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"пароль от сервера {p}", [p], "ru"

    @add("prose", "ru Пароль —")
    def _(g: Gen) -> tuple:
        p = g.plain_password(10)
        return f"Логин: operator. Пароль — {p}.", [p], "ru"

    @add("prose", "ru логин, пароль")
    def _(g: Gen) -> tuple:
        p = g.password(11)
        return f"логин admin, пароль {p}, вход через VPN", [p], "ru"

    @add("prose", "ru секретный ключ")
    def _(g: Gen) -> tuple:
        p = g.alnum(40)
        return f"Секретный ключ для подписи: {p}", [p], "ru"

    @add("prose", "ru пароль от почты")
    def _(g: Gen) -> tuple:
        p = g.password(9)
        return f"Напоминаю: пароль от почты {p}", [p], "ru"

    @add("prose", "de Passwort lautet")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"Das Passwort für den Server lautet {p}.", [p], "de"

    @add("prose", "de Kennwort:")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"Benutzer: backup, Kennwort: {p}", [p], "de"

    @add("prose", "pl Hasło:")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"Hasło: {p}", [p], "pl"

    @add("prose", "pl hasło do bazy to")
    def _(g: Gen) -> tuple:
        p = g.password(11)
        return f"hasło do bazy to {p} i nie zmieniaj go", [p], "pl"

    return f


def dev_formats() -> list[Format]:
    """Development set: the formats issue 22 lists and variants of the same families."""
    f: list[Format] = []

    def add(family: str, name: str) -> Callable[[Callable[[Gen], tuple]], Callable[[Gen], tuple]]:
        def wrap(maker: Callable[[Gen], tuple]) -> Callable[[Gen], tuple]:
            f.append((family, name, maker))
            return maker
        return wrap

    @add("cloud", "vault hvs token")
    def _(g: Gen) -> tuple:
        k = "hvs." + g.url(26)
        return f"export VAULT_TOKEN={k}", [k]

    @add("cloud", "vault hvs bare")
    def _(g: Gen) -> tuple:
        k = "hvs." + g.url(95)
        return f"use {k} for the kv engine", [k]

    @add("cloud", "azure sas sig=")
    def _(g: Gen) -> tuple:
        sig = g.b64(43).replace("/", "%2F") + "%3D"
        return f"?sv=2021-08-06&ss=bfqt&srt=sco&sp=rwdlacup&se=2026-12-01&sig={sig}", [sig]

    @add("cloud", "az login -p")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"az login -u admin@tenant.onmicrosoft.com -p {p}", [p]

    @add("cloud", "presigned s3")
    def _(g: Gen) -> tuple:
        sig = g.hex(64)
        return f"https://b.s3.amazonaws.com/k?X-Amz-Expires=60&X-Amz-Signature={sig}&X-Amz-SignedHeaders=host", [sig]

    @add("cloud", "aws secret key prose")
    def _(g: Gen) -> tuple:
        s = g.b64(40)
        return f"secret access key {s}", [s]

    @add("ci", "gitlab runner glrt-")
    def _(g: Gen) -> tuple:
        k = "glrt-t1_" + g.url(20)
        return f"runner token {k}", [k]

    @add("ci", "docker login -p")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"docker login registry.gitlab.com -u ci -p {p}", [p]

    @add("ci", "docker login --password")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"docker login --username ci --password {p} ghcr.io", [p]

    @add("chat", "discord bot token")
    def _(g: Gen) -> tuple:
        k = "MT" + g.alnum(24) + "." + g.url(6) + "." + g.url(27)
        return f"DISCORD_TOKEN={k}", [k]

    @add("chat", "discord bot token bare")
    def _(g: Gen) -> tuple:
        k = "Nz" + g.alnum(22) + "." + g.url(6) + "." + g.url(27)
        return f"bot token is {k}", [k]

    @add("database", ".pgpass")
    def _(g: Gen) -> tuple:
        p = g.password(12, "!#%^*-_.~")
        return f"localhost:5432:*:postgres:{p}", [p]

    @add("database", "sqlplus user/pass@")
    def _(g: Gen) -> tuple:
        p = g.plain_password(10)
        return f"sqlplus scott/{p}@ORCL", [p]

    @add("database", "go mysql dsn")
    def _(g: Gen) -> tuple:
        p = g.password(10, "!#%^*-_.~")
        return f"root:{p}@tcp(127.0.0.1:3306)/test", [p]

    @add("database", "url password with /")
    def _(g: Gen) -> tuple:
        p = g.alnum(6) + "/" + g.alnum(6)
        return f"postgres://app:{p}@db:5432/app", [p]

    @add("database", "ldapsearch -w")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"ldapsearch -D cn=admin -w '{p}' -b dc=x", [p]

    @add("database", "smbclient -U user%pass")
    def _(g: Gen) -> tuple:
        p = g.password(10, "!#$^*-_.~")
        return f"smbclient -U 'CORP/ops%{p}' //srv/c$", [p]

    @add("database", "openssl -passout pass:")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"openssl req -new -key k.pem -passout pass:{p}", [p]

    @add("database", "sqlcmd -P")
    def _(g: Gen) -> tuple:
        p = g.password(12)
        return f"sqlcmd -U sa -P {p} -S localhost", [p]

    @add("url-cookie", "session cookie")
    def _(g: Gen) -> tuple:
        k = g.url(40)
        return f"Cookie: session={k}", [k]

    @add("url-cookie", "laravel session")
    def _(g: Gen) -> tuple:
        k = "eyJpdiI6" + g.b64(100)
        return f"Cookie: XSRF-TOKEN=x; laravel_session={k}", [k]

    @add("url-cookie", "sentry dsn")
    def _(g: Gen) -> tuple:
        k = g.hex(32)
        return f"dsn: https://{k}@o4504.ingest.us.sentry.io/4506", [k]

    @add("key-material", "jwt over two lines")
    def _(g: Gen) -> tuple:
        k = g.jwt()
        cut = k.index(".") + 30
        return f"Authorization: Bearer {k[:cut]}\n{k[cut:]}", [k[k.index('.') + 5:cut], k[cut:]]

    @add("key-material", "pem re-spaced armour")
    def _(g: Gen) -> tuple:
        body = g.pem_body(4)
        return "-----BEGIN  PRIVATE  KEY-----\n" + "\n".join(body) + "\n-----END  PRIVATE  KEY-----", body

    @add("key-material", "pem lower-case armour")
    def _(g: Gen) -> tuple:
        body = g.pem_body(4)
        return "----- begin private key -----\n" + "\n".join(body) + "\n----- end private key -----", body

    @add("key-material", "totp seed")
    def _(g: Gen) -> tuple:
        s = g.pick(BASE32, 16)
        return f"otpauth://totp/x?secret={s}&issuer=y", [s]

    @add("key-material", "totp secret prose")
    def _(g: Gen) -> tuple:
        s = g.pick(BASE32, 32)
        return f"TOTP seed {s}", [s]

    @add("seed-phrase", "bip39 12 words")
    def _(g: Gen) -> tuple:
        s = g.words(12)
        return f"seed phrase: {s}", [s], "en"

    @add("seed-phrase", "bip39 24 words bare")
    def _(g: Gen) -> tuple:
        s = g.words(24)
        return f"{s}", [s], "en"

    @add("seed-phrase", "bip39 uk")
    def _(g: Gen) -> tuple:
        s = g.words(12)
        return f"мнемоніка: {s}", [s], "uk"

    @add("prose", "uk Гасло:")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"Гасло: {p}", [p], "uk"

    @add("prose", "uk гасло від")
    def _(g: Gen) -> tuple:
        p = g.plain_password(10)
        return f"гасло від вайфаю {p}", [p], "uk"

    @add("prose", "ru пароль")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"Пароль от админки: {p}", [p], "ru"

    @add("prose", "ru пароль такой")
    def _(g: Gen) -> tuple:
        p = g.plain_password(11)
        return f"пароль такой {p}", [p], "ru"

    @add("prose", "en password is")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"the root password is {p}", [p], "en"

    @add("prose", "de Passwort")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"Passwort: {p}", [p], "de"

    @add("prose", "pl hasło")
    def _(g: Gen) -> tuple:
        p = g.password(10)
        return f"hasło {p}", [p], "pl"

    return f


def build(formats: list[Format], seed: int, frame_offset: int) -> list[dict[str, object]]:
    g = Gen(seed)
    cases: list[dict[str, object]] = []
    for i, (family, name, maker) in enumerate(formats):
        made = maker(g)
        snippet, secrets = made[0], made[1]
        if len(made) == 3:
            lang = made[2]
            text = snippet
        else:
            lang = LANGS[i % len(LANGS)]
            frames = FRAMES[lang]
            text = frames[(i + frame_offset) % len(frames)].format(x=snippet)
        cases.append({"id": f"{family}/{i:03d}", "family": family, "format": name, "lang": lang,
                      "text": text, "secrets": secrets})
    return cases


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, formats, seed, offset in (("heldout", heldout_formats(), 2022, 0), ("dev", dev_formats(), 7, 1)):
        cases = build(formats, seed, offset)
        path = OUT / f"planted_secrets_{name}.json"
        path.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        langs = sorted({str(c["lang"]) for c in cases})
        print(f"{path.relative_to(ROOT)}: {len(cases)} formats, languages {', '.join(langs)}")


if __name__ == "__main__":
    main()
