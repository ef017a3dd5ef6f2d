//! The shape rules: credentials recognisable by their own form, wherever they stand. Provider
//! tokens with a documented prefix, length and alphabet (GitHub, GitLab, Slack, Stripe, AWS, Google,
//! Azure, DigitalOcean, Docker Hub, npm, PyPI, Shopify, SendGrid, Hugging Face, Databricks, …),
//! prefix-less shapes with a distinctive inner mark (Telegram bot tokens, Azure AD client secrets,
//! Azure storage keys), structured tokens told by their structure (a JWS/JWE whose header
//! decodes to JSON with `alg`, dotted base64url tokens with random ends, PASETO, macaroons, NATS
//! seeds, the private members of a JWK, base64 of JSON that holds credentials), URL user-info and
//! scheme-less DSNs (Oracle, Go's MySQL driver, Samba's `user%pass`), CLI flags and statements that
//! carry a password (`curl -u`, `sshpass -p`, `mysql -p…`, `IDENTIFIED BY`,
//! `ConvertTo-SecureString`), `.netrc`, `.pgpass` and Postfix `sasl_passwd` lines, crypt and
//! `{SSHA}`-style hashes.
//!
//! Guarantees: every rule is a `regex` (linear time) over the whole text, and each match passes one
//! validator before it is masked: a placeholder (`xxxx`, `...`, `your-…-here`) or a lowercase word
//! chain (`sk-learn-pipelines`) is left alone. Most rules mask the whole match; the ones with a
//! context (`curl -u user:`, `machine … password`) mask only the secret group.
//!
//! Must never: hold a real credential (the patterns describe formats; the test corpus makes fresh
//! fake values); use an unbounded look-back (no `.*` before a secret).

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::value::{
    decode_base64, has_placeholder_marks, is_placeholder, is_word_chain, looks_random,
};
use super::{REDACTED, is_secret_key};

/// Provider tokens with a literal prefix: `(kind, pattern)`. All are joined into one regex, so the
/// text is scanned once for all of them. `\b` is made an ASCII word boundary when compiled.
const PREFIXED: &[(&str, &str)] = &[
    ("openai-anthropic-openrouter", r"\bsk-[A-Za-z0-9_-]{12,}\b"),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{20,255}\b"),
    ("github-fine-grained", r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    (
        "gitlab-token",
        r"\bgl(?:pat|dt|rt|rtr|ptt|cbt|ft|soat|imt|oas|agent|ffct|wt)-[A-Za-z0-9_.-]{20,}\b",
    ),
    (
        "gitlab-runner-registration",
        r"\bGR1348941[A-Za-z0-9_-]{20,}\b",
    ),
    ("slack-token", r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}\b"),
    ("slack-refresh", r"\bxoxe\.xox[bp]-[A-Za-z0-9-]{20,}\b"),
    ("slack-app", r"\bxapp-[A-Za-z0-9-]{20,}\b"),
    (
        "slack-webhook",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,}",
    ),
    (
        "stripe-key",
        r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b",
    ),
    ("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    (
        "aws-access-key-id",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    (
        "aws-session-token",
        r"\b(?:FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj)[A-Za-z0-9+/]{40,}={0,2}",
    ),
    ("google-api-key", r"\bAIza[A-Za-z0-9_-]{35}\b"),
    ("google-oauth-secret", r"\bGOCSPX-[A-Za-z0-9_-]{20,}"),
    ("google-oauth-token", r"\bya29\.[A-Za-z0-9_-]{20,}"),
    ("google-refresh-token", r"\b1//0[A-Za-z0-9_-]{30,}"),
    ("twilio-sid", r"\b(?:AC|SK)[a-fA-F0-9]{32}\b"),
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("docker-hub-token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    (
        "sendgrid-key",
        r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
    ),
    ("mailgun-key", r"\b(?:key|pubkey)-[a-f0-9]{32}\b"),
    ("heroku-token", r"\bHRKU-[A-Za-z0-9_-]{40,}"),
    ("huggingface-token", r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b"),
    ("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    ("atlassian-token", r"\bATATT3[A-Za-z0-9_=-]{50,}"),
    ("bitbucket-token", r"\bATBB[A-Za-z0-9_=.-]{28,}"),
    ("trello-token", r"\bATTA[A-Za-z0-9]{60,}\b"),
    ("linear-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}\b"),
    (
        "notion-token",
        r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b",
    ),
    ("airtable-pat", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    ("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    (
        "grafana-token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
    ),
    (
        "newrelic-key",
        r"\bNR(?:AK|JS|II|AA)-[A-Za-z0-9_-]{19,32}\b",
    ),
    ("sentry-token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    (
        "doppler-token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
    ),
    ("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),
    ("pulumi-token", r"\bpul-[a-f0-9]{40}\b"),
    (
        "supabase-token",
        r"\b(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})\b",
    ),
    (
        "square-token",
        r"\b(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|EAAA[A-Za-z0-9_+=-]{60,})",
    ),
    (
        "braintree-token",
        r"\baccess_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}\b",
    ),
    ("facebook-token", r"\bEAA[A-Za-z0-9]{90,}\b"),
    ("twitter-bearer", r"\bA{22}[A-Za-z0-9%]{30,}"),
    (
        "mapbox-secret",
        r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
    ),
    (
        "age-secret-key",
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
    ),
    ("alibaba-key-id", r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    ("tencent-key-id", r"\bAKID[A-Za-z0-9]{32}\b"),
    ("dropbox-token", r"\bsl\.(?:u\.)?[A-Za-z0-9_-]{100,}"),
    ("adafruit-key", r"\baio_[A-Za-z0-9]{28}\b"),
    ("clojars-token", r"\bCLOJARS_[A-Za-z0-9]{60}\b"),
    ("dynatrace-token", r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
    ("easypost-key", r"\bEZ[AT]K[A-Za-z0-9]{54}\b"),
    ("flutterwave-key", r"\bFLWSECK(?:_TEST)?-[a-h0-9]{32}-X"),
    ("frameio-token", r"\bfio-u-[A-Za-z0-9_=-]{64}"),
    ("infracost-key", r"\bico-[A-Za-z0-9]{32}\b"),
    (
        "jfrog-key",
        r"\b(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b",
    ),
    ("openshift-token", r"\bsha256~[A-Za-z0-9_-]{43}"),
    (
        "plaid-token",
        r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    ),
    (
        "planetscale-token",
        r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}",
    ),
    ("prefect-key", r"\bpnu_[A-Za-z0-9]{36}\b"),
    ("readme-key", r"\brdme_[a-z0-9]{70}\b"),
    ("rubygems-key", r"\brubygems_[a-f0-9]{48}\b"),
    ("scalingo-token", r"\btk-us-[A-Za-z0-9_-]{48}"),
    (
        "brevo-key",
        r"\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b",
    ),
    ("shippo-token", r"\bshippo_(?:live|test)_[a-f0-9]{40}\b"),
    ("typeform-token", r"\btfp_[A-Za-z0-9_.=-]{59}"),
    ("groq-key", r"\bgsk_[A-Za-z0-9]{48,}\b"),
    ("xai-key", r"\bxai-[A-Za-z0-9]{70,}\b"),
    ("replicate-token", r"\br8_[A-Za-z0-9]{37}\b"),
    ("perplexity-key", r"\bpplx-[A-Za-z0-9]{40,}\b"),
    (
        "langsmith-key",
        r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b",
    ),
    ("pinecone-key", r"\bpcsk_[A-Za-z0-9_]{40,}\b"),
    ("tavily-key", r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{30,}\b"),
    ("firecrawl-key", r"\bfc-[a-f0-9]{32}\b"),
    ("resend-key", r"\bre_[A-Za-z0-9_]{30,}\b"),
    ("figma-token", r"\bfig[dou]_[A-Za-z0-9_-]{40,}"),
    (
        "sourcegraph-token",
        r"\bsgp_(?:local_|[a-f0-9]{16}_)?[a-f0-9]{40}\b",
    ),
    ("buildkite-token", r"\bbkua_[a-f0-9]{40}\b"),
    ("sonarqube-token", r"\bsq[pua]_[a-f0-9]{40}\b"),
    ("render-key", r"\brnd_[A-Za-z0-9]{32}\b"),
    ("neon-key", r"\bnapi_[a-z0-9]{64}\b"),
    (
        "flyio-token",
        r"\b(?:FlyV1 )?fm[12][ar]?_[A-Za-z0-9+/=_-]{50,}",
    ),
    ("netlify-token", r"\bnfp_[A-Za-z0-9]{36}\b"),
    (
        "firebase-fcm-key",
        r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}",
    ),
    (
        "salesforce-token",
        r"\b00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}",
    ),
    ("intercom-token", r"\bdG9rOm[A-Za-z0-9+/=_-]{40,}"),
    ("contentful-token", r"\bCFPAT-[A-Za-z0-9_-]{43}"),
    ("circleci-token", r"\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}\b"),
    ("twitch-token", r"\boauth:[a-z0-9]{30}\b"),
    (
        "zapier-webhook",
        r"https?://hooks\.zapier\.com/hooks/catch/[0-9]+/[A-Za-z0-9]+",
    ),
    (
        "discord-webhook",
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{40,}",
    ),
    (
        "bip32-private-key",
        r"\b[xyzt]prv[1-9A-HJ-NP-Za-km-z]{100,}\b",
    ),
    ("onepassword-token", r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}"),
    (
        "onepassword-secret-key",
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
    ),
    ("adobe-secret", r"\bp8e-[A-Za-z0-9]{32}\b"),
    ("clickhouse-secret", r"\b4b1d[A-Za-z0-9]{38}\b"),
    (
        "cloudflare-origin-ca",
        r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b",
    ),
    ("octopus-key", r"\bAPI-[A-Z0-9]{26}\b"),
    ("yandex-key", r"\bAQVN[A-Za-z0-9_-]{35,38}\b"),
    (
        "harness-token",
        r"\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}\b",
    ),
    ("duffel-token", r"\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    ("lob-key", r"\b(?:live|test)_(?:pub_)?[a-f0-9]{35}\b"),
    ("nats-nkey-seed", r"\bS[UAONCXP][A-Z2-7]{56}\b"),
    (
        "paseto-token",
        r"\bv[1-4]\.(?:local|public)\.[A-Za-z0-9_-]{40,}(?:\.[A-Za-z0-9_-]+)?",
    ),
    (
        "macaroon-v1",
        r"\bMDAxY2xvY2F0aW9u[A-Za-z0-9_+/-]{20,}={0,2}",
    ),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.?[A-Za-z0-9_-]*",
    ),
    (
        "crypt-hash",
        r"\$(?:2[abxy]|apr1|1|5|6|y|argon2(?:id|i|d))\$[A-Za-z0-9./$=,+_-]{20,}",
    ),
];

/// One rule beyond the prefixed ones: a regex, which capture group is the secret (0 = all), and
/// the literals one of which the text must contain before the regex runs.
struct Rule {
    regex: Regex,
    group: usize,
    needs: &'static [&'static str],
    check: fn(&str) -> bool,
}

/// A rule with no literal prefix or with a context.
struct RuleSpec {
    /// What it finds (documentation; the tests' corpus uses the same names).
    #[allow(dead_code)]
    kind: &'static str,
    /// The regex (`\b` is an ASCII word boundary).
    pattern: &'static str,
    /// Which capture group is the secret (0 = the whole match).
    group: usize,
    /// Literals one of which the text must contain before the regex is worth running (none:
    /// always run, for a pattern that starts with literals of its own, which the regex searches
    /// as fast). A rule whose pattern starts with a case-insensitive word lists its usual
    /// spellings here: a `contains` beats a search for every mix of cases.
    needs: &'static [&'static str],
    /// The last word on a match: `false` leaves it alone.
    check: fn(&str) -> bool,
}

/// Rules with no literal prefix or with a context.
const OTHER: &[RuleSpec] = &[
    RuleSpec {
        kind: "basic-auth",
        pattern: r"(?i:\bbasic)[ \t]+([A-Za-z0-9+/]{12,}={0,2})",
        group: 0,
        needs: &[],
        check: has_digit_or_upper,
    },
    RuleSpec {
        kind: "bearer",
        pattern: r"(?i:\bbearer)[ \t]+([A-Za-z0-9._~+/-]{12,}=*)",
        group: 0,
        needs: &[],
        check: not_a_prose_word,
    },
    RuleSpec {
        // Three or more base64url segments with random ends (Discord bot tokens, session
        // tokens of other services): `<id>.<time>.<hmac>`.
        kind: "dotted-token",
        pattern: r"\b[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{6,}){1,3}\.[A-Za-z0-9_-]{20,}\b",
        group: 0,
        needs: &[],
        check: is_dotted_token,
    },
    RuleSpec {
        kind: "telegram-bot-token",
        pattern: r"(?:\b|bot)[0-9]{6,12}:AA[A-Za-z0-9_-]{33}\b",
        group: 0,
        needs: &[":AA"],
        check: real,
    },
    RuleSpec {
        kind: "azure-ad-client-secret",
        pattern: r"(?:^|[^A-Za-z0-9_~.])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})",
        group: 1,
        needs: &["Q~"],
        check: real,
    },
    RuleSpec {
        kind: "azure-storage-key",
        pattern: r"(?:^|[^A-Za-z0-9+/-])([A-Za-z0-9+/]{86}==)",
        group: 1,
        needs: &["=="],
        check: looks_random_16,
    },
    RuleSpec {
        kind: "mailchimp-key",
        pattern: r"\b[a-f0-9]{32}-us[0-9]{1,2}\b",
        group: 0,
        needs: &["-us"],
        check: real,
    },
    RuleSpec {
        kind: "terraform-token",
        pattern: r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
        group: 0,
        needs: &[".atlasv1."],
        check: real,
    },
    RuleSpec {
        kind: "teams-webhook",
        pattern: r"https://[A-Za-z0-9.-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{40,}",
        group: 0,
        needs: &[".webhook.office.com"],
        check: real,
    },
    RuleSpec {
        kind: "putty-private-lines",
        pattern: r"Private-Lines:[ \t]*[0-9]+\r?\n(?:[A-Za-z0-9+/=]+(?:\r?\n|$)){1,64}(?:Private-(?:MAC|Hash):[ \t]*[0-9a-fA-F]+)?",
        group: 0,
        needs: &["Private-Lines:"],
        check: real,
    },
    // URL user-info with a password: `scheme://user:pass@host`, `redis://:pass@host`.
    RuleSpec {
        kind: "url-password",
        pattern: r"(?i)\b[a-z][a-z0-9+.-]{1,20}://((?:[^\s:/?#@'\x22<>\[\]]*):([^\s/'\x22<>\[\]]+))@",
        group: 1,
        needs: &["://"],
        check: url_password,
    },
    // URL user-info that is itself a key: a Sentry DSN, `https://TOKEN@host`.
    RuleSpec {
        kind: "url-user-key",
        pattern: r"(?i)\b[a-z][a-z0-9+.-]{1,20}://([A-Za-z0-9_%~-]{16,})@",
        group: 1,
        needs: &["://"],
        check: looks_random_16,
    },
    RuleSpec {
        kind: "curl-user",
        pattern: r"(?i)\bcurl\b[^\n|;&]{0,200}?\s(?:-u|--user|--proxy-user)(?:\s+|=)?['\x22]?[^\s'\x22:]*:([^\s'\x22]+)",
        group: 1,
        needs: &["curl"],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "sshpass",
        pattern: r"\bsshpass\b[^\n|;&]{0,40}?\s-p[ \t]*('[^'\n]*'|\x22[^\x22\n]*\x22|[^\s'\x22]+)",
        group: 1,
        needs: &["sshpass"],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "mysql-password",
        pattern: r"\b(?:mysql|mysqldump|mysqladmin|mysqlsh|mariadb)\b[^\n|;&]{0,160}?\s-p('[^'\n]*'|\x22[^\x22\n]*\x22|[^\s'\x22-][^\s'\x22]*)",
        group: 1,
        needs: &["-p"],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "login-password-flag",
        pattern: r"\b(?:(?:docker|podman|helm|oras|skopeo|buildah|nerdctl)\s+(?:registry\s+)?login|az\s+login|redis-cli|sqlcmd|ldapsearch|ldapmodify|ldapadd|ldapdelete|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|rabbitmqadmin)\b[^\n|;&]{0,160}?\s-[paPw][ \t]+('[^'\n]*'|\x22[^\x22\n]*\x22|[^\s'\x22-][^\s'\x22]*)",
        group: 1,
        needs: &[],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "openssl-pass",
        pattern: r"\s-pass(?:in|out)?[ \t]+pass:([^\s'\x22]+)",
        group: 1,
        needs: &["pass:"],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "netrc",
        pattern: r"(?i)\b(?:login|machine)[ \t]+\S+\s+(?:login[ \t]+\S+\s+)?(?:password|passwd)[ \t]+(\S+)",
        group: 1,
        needs: &[],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "pgpass",
        pattern: r"(?m)^[ \t]*(?:[A-Za-z0-9._*-]+|\[[0-9A-Fa-f:]+\]):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:([^\s:][^\s]*)[ \t]*\r?$",
        group: 1,
        needs: &[],
        check: value_not_placeholder,
    },
    RuleSpec {
        kind: "base64-pem-private-key",
        pattern: r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}",
        group: 0,
        needs: &["LS0tLS1CRUdJTi"],
        check: wraps_a_private_key,
    },
    RuleSpec {
        kind: "mnemonic",
        pattern: r"(?i)\b(?:mnemonic|seed[ _-]?phrase|recovery[ _-]?phrase|seed[ _-]?words)[\x22']?[ \t]*[:=]?[ \t]*[\x22']?((?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})\b",
        group: 1,
        needs: &[],
        check: real,
    },
    // Base64 of a JSON object: a JWS or JWE in compact form whatever its header's spacing
    // (`eyJ…`, `eyAi…`, `ewog…`; the header names an `alg`), or a document that holds credentials
    // (a `.dockerconfigjson`, a service-account key file), masked whole.
    RuleSpec {
        kind: "base64-json",
        pattern: r"\be(?:yJ|yA|wo|w0)[A-Za-z0-9+/_-]{12,}={0,2}(?:\.[A-Za-z0-9_=-]*){0,4}",
        group: 0,
        needs: &[],
        check: is_secret_json,
    },
    // The private members of a JSON Web Key (`d`, `p`, `q`, … of RSA and EC keys; `k` of a
    // symmetric one); the public ones (`n`, `e`, `x`, `y`) stay.
    RuleSpec {
        kind: "jwk-private-member",
        pattern: r#""(?:d|p|q|dp|dq|qi|k)"[ \t]*:[ \t]*"([A-Za-z0-9_-]{16,})""#,
        group: 1,
        needs: &["\"kty\""],
        check: real,
    },
    // `jdbc:oracle:thin:scott/tiger@…`, `sqlplus system/pw@…`: Oracle's `user/password@`.
    RuleSpec {
        kind: "oracle-user-password",
        pattern: r"\b(?:jdbc:oracle:[a-z]+:|sqlplus[ \t]+(?:-[A-Za-z]+[ \t]+)*)[A-Za-z0-9_$#.]+/([^\s@/'\x22]+)@",
        group: 1,
        needs: &[],
        check: value_not_placeholder,
    },
    // Go's MySQL driver: `user:password@tcp(host:3306)/db`.
    RuleSpec {
        kind: "go-mysql-dsn",
        pattern: r"(?:^|[\s\x22'\x60=])[A-Za-z0-9_.-]+:([^\s@:/'\x22\x60]+)@(?:tcp|udp|unix)\(",
        group: 1,
        needs: &["@tcp(", "@unix(", "@udp("],
        check: value_not_placeholder,
    },
    // Samba's `-U user%password`.
    RuleSpec {
        kind: "smb-user-password",
        pattern: r"\b(?:smbclient|smbmap|smbget|smbcacls|rpcclient|net)\b[^\n|;&]{0,200}?\s(?:-U|--user(?:name)?)(?:[ \t]+|=)['\x22]?[^\s%'\x22]+%([^\s'\x22]+)",
        group: 1,
        needs: &["%"],
        check: value_not_placeholder,
    },
    // Postfix `sasl_passwd`: `[smtp.example.com]:587 user:password`.
    RuleSpec {
        kind: "postfix-sasl-passwd",
        pattern: r"(?m)^[ \t]*\[[A-Za-z0-9.-]+\]:[0-9]{1,5}[ \t]+[^\s:]+:(\S+)[ \t]*\r?$",
        group: 1,
        needs: &["]:"],
        check: value_not_placeholder,
    },
    // SQL: `CREATE USER … IDENTIFIED BY '…'` (MySQL, MariaDB, Oracle).
    RuleSpec {
        kind: "sql-identified-by",
        pattern: r"(?i)\bidentified(?:[ \t]+with[ \t]+[A-Za-z0-9_]+)?[ \t]+by[ \t]+('[^'\n]*'|\x22[^\x22\n]*\x22|[^\s;'\x22]+)",
        group: 1,
        needs: &["IDENTIFIED", "identified", "Identified"],
        check: value_not_placeholder,
    },
    // Password hashes with an LDAP-style scheme (`{SSHA}…`, `{SHA}…`, `{PBKDF2-SHA256}…`).
    RuleSpec {
        kind: "scheme-password-hash",
        pattern: r"\{(?:S?SHA(?:256|384|512)?|S?MD5|CRYPT|PBKDF2(?:-SHA(?:1|256|512))?|ARGON2|BCRYPT)\}[A-Za-z0-9+/=.$]{8,}",
        group: 0,
        needs: &["}"],
        check: real,
    },
    // PowerShell: `ConvertTo-SecureString "…" -AsPlainText`.
    RuleSpec {
        kind: "powershell-securestring",
        pattern: r"(?i)\bConvertTo-SecureString(?:[ \t]+-String)?[ \t]+('[^'\n]*'|\x22[^\x22\n]*\x22)",
        group: 1,
        needs: &["ConvertTo-SecureString", "convertto-securestring"],
        check: value_not_placeholder,
    },
];

/// The check of a rule with no context: the match is not a placeholder or a name.
fn real(token: &str) -> bool {
    token_is_real(token)
}

fn has_digit_or_upper(m: &str) -> bool {
    let body = m.split_whitespace().nth(1).unwrap_or("");
    token_is_real(m)
        && body
            .bytes()
            .any(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

/// `Bearer authentication` is prose; `Bearer abcdefghijklmno` is the reference's token.
fn not_a_prose_word(m: &str) -> bool {
    const ENDINGS: &[&str] = &[
        "tion", "sion", "ing", "ment", "ness", "able", "ible", "ity", "ance", "ence", "ship",
        "ized", "ised", "ers", "ies",
    ];
    let body = m.split_whitespace().nth(1).unwrap_or("");
    token_is_real(m)
        && !(body.bytes().all(|b| b.is_ascii_lowercase())
            && ENDINGS.iter().any(|e| body.ends_with(e)))
}

/// Whether base64 text (a kubeconfig's `client-key-data`, a Helm value) decodes to a PEM
/// private-key header.
fn wraps_a_private_key(b64: &str) -> bool {
    let header = String::from_utf8_lossy(&decode_base64(b64, 60)).into_owned();
    header.starts_with("-----BEGIN") && header.contains("PRIVATE KEY")
}

/// Whether a dotted token's first and last segments are random (a digit, letters, no words).
fn is_dotted_token(token: &str) -> bool {
    let random = |seg: &str| {
        let b = seg.as_bytes();
        b.iter().any(u8::is_ascii_digit)
            && b.iter().filter(|c| c.is_ascii_alphabetic()).count() >= 8
            && looks_random(seg, 16)
    };
    let first = token.split('.').next().unwrap_or("");
    let last = token.rsplit('.').next().unwrap_or("");
    random(first) && random(last) && token_is_real(token)
}

/// Whether base64 of a JSON object is a secret: a compact JOSE token (its header names an
/// algorithm and more than the header follows), or a document with a key that names a secret
/// (`auths`, `private_key`, `password`) or a service-account key file.
fn is_secret_json(m: &str) -> bool {
    if !token_is_real(m) {
        return false;
    }
    match m.split_once('.') {
        Some((header, rest)) => {
            let decoded = decode_base64(header, 512);
            let json = String::from_utf8_lossy(&decoded);
            rest.len() >= 16 && json.starts_with('{') && json.contains("\"alg\"")
        }
        None => m.len() >= 40 && wraps_json_credentials(m),
    }
}

/// Whether base64 decodes to a JSON object with a key that names a secret (`auths`,
/// `private_key`, `password`) or to a service-account key file.
fn wraps_json_credentials(b64: &str) -> bool {
    let decoded = decode_base64(b64, 4096);
    let json = String::from_utf8_lossy(&decoded);
    if !json.starts_with('{') {
        return false;
    }
    if json.contains("\"service_account\"") {
        return true;
    }
    // Every `"name":` of the object, at any depth.
    let pieces: Vec<&str> = json.split('"').collect();
    pieces
        .iter()
        .enumerate()
        .skip(1)
        .step_by(2)
        .any(|(i, key)| {
            pieces
                .get(i + 1)
                .is_some_and(|after| after.trim_start().starts_with(':'))
                && is_secret_key(key)
        })
}

fn looks_random_16(v: &str) -> bool {
    looks_random(v, 16) && token_is_real(v)
}

fn value_not_placeholder(v: &str) -> bool {
    !is_placeholder(v.trim_matches(['\'', '"']))
}

fn url_password(userinfo: &str) -> bool {
    let password = userinfo.split_once(':').map_or("", |(_, p)| p);
    !password.is_empty() && !is_placeholder(password)
}

/// Every `\\b` of a pattern becomes an ASCII word boundary (`(?-u:\\b)`), as in the reference.
fn expand(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

struct Compiled {
    prefixed: Regex,
    other: Vec<Rule>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let joined = PREFIXED
        .iter()
        .map(|(_, p)| format!("(?:{})", expand(p)))
        .collect::<Vec<_>>()
        .join("|");
    Compiled {
        prefixed: regex::RegexBuilder::new(&joined)
            .size_limit(64 << 20)
            .dfa_size_limit(16 << 20)
            .build()
            .expect("the prefixed token rules compile"),
        other: OTHER
            .iter()
            .map(|spec| Rule {
                regex: Regex::new(&expand(spec.pattern)).expect("a shape rule compiles"),
                group: spec.group,
                needs: spec.needs,
                check: spec.check,
            })
            .collect(),
    }
});

/// The bytes that occur in a text or in the sentinel (masking brings no other new text, so the
/// set of the text to scrub holds for every pass over it): a literal with a byte outside the set
/// is absent without a search, and the rules that need it cost nothing on text that cannot hold
/// their secret.
pub(crate) struct ByteSet([bool; 256]);

impl ByteSet {
    /// The bytes of `text` and of [`REDACTED`].
    pub(crate) fn of(text: &str) -> Self {
        let mut seen = [false; 256];
        let chunks = text.as_bytes().chunks_exact(8);
        let rest = chunks.remainder();
        for chunk in chunks {
            for &b in chunk {
                seen[usize::from(b)] = true;
            }
        }
        for &b in rest.iter().chain(REDACTED.as_bytes()) {
            seen[usize::from(b)] = true;
        }
        Self(seen)
    }

    /// Whether every byte of `literal` is in the set.
    fn may_hold(&self, literal: &str) -> bool {
        literal.bytes().all(|b| self.0[usize::from(b)])
    }
}

/// Masks every shape-rule match in `text`, whose bytes are in `bytes`; returns `None` when
/// nothing changed.
pub(crate) fn apply(text: &str, bytes: &ByteSet) -> Option<String> {
    let compiled = &*COMPILED;
    let mut out: Option<String> = None;
    let mut replace = |regex: &Regex, group: usize, check: fn(&str) -> bool, needs: &[&str]| {
        let current = out.as_deref().unwrap_or(text);
        let found = |n: &&str| bytes.may_hold(n) && current.contains(n);
        if !needs.is_empty() && !needs.iter().any(found) {
            return;
        }
        let replaced = regex.replace_all(current, |c: &Captures| {
            let whole = c.get(0).expect("group 0");
            let Some(secret) = c.get(group) else {
                return whole.as_str().to_owned();
            };
            if secret.as_str().contains(REDACTED) || !check(secret.as_str()) {
                return whole.as_str().to_owned();
            }
            let s = whole.as_str();
            let (from, to) = (secret.start() - whole.start(), secret.end() - whole.start());
            format!("{}{REDACTED}{}", &s[..from], &s[to..])
        });
        if let std::borrow::Cow::Owned(s) = replaced {
            out = Some(s);
        }
    };
    replace(&compiled.prefixed, 0, real, &[]);
    for rule in &compiled.other {
        replace(&rule.regex, rule.group, rule.check, rule.needs);
    }
    out
}

/// A token-shaped match that is really a placeholder or a name is left alone.
fn token_is_real(token: &str) -> bool {
    let t = token.trim_matches(['\'', '"']);
    if t.contains(REDACTED) {
        return false;
    }
    let body = t.split_whitespace().last().unwrap_or(t);
    !is_word_chain(body) && !has_placeholder_marks(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_wrapped_private_keys_are_recognised_and_certificates_are_not() {
        // base64 of "-----BEGIN RSA PRIVATE KEY-----" and of "-----BEGIN CERTIFICATE-----".
        assert!(wraps_a_private_key(
            "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo"
        ));
        assert!(!wraps_a_private_key(
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg"
        ));
    }

    #[test]
    fn rule_kinds_are_unique() {
        let mut kinds: Vec<&str> = PREFIXED.iter().map(|(k, _)| *k).collect();
        kinds.extend(OTHER.iter().map(|s| s.kind));
        let count = kinds.len();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), count);
    }

    #[test]
    fn every_rule_compiles_with_ascii_word_boundaries() {
        assert!(!COMPILED.other.is_empty());
        assert_eq!(
            expand(r"\bnpm_[a-z]{36}\b"),
            r"(?-u:\b)npm_[a-z]{36}(?-u:\b)"
        );
    }
}
