//! Provider tokens with a documented literal prefix, length and alphabet (GitHub, GitLab, Slack,
//! Stripe, AWS, Google, Azure, DigitalOcean, Docker Hub, npm, PyPI, Shopify, SendGrid, Hugging
//! Face, Databricks, …, JWTs, NATS seeds, PASETO, macaroons, crypt hashes): one table, joined by
//! the engine into a single regex so the text is scanned once for all of them.
//!
//! Guarantees: a pattern describes a format (prefix, alphabet, length), never a value. Must never:
//! hold a real credential; start with something other than a literal (the joined regex owes its
//! speed to searching for the prefixes first).

/// Provider tokens with a literal prefix: `(kind, pattern)`. All are joined into one regex, so the
/// text is scanned once for all of them. `\b` is made an ASCII word boundary when compiled.
pub(super) const PREFIXED: &[(&str, &str)] = &[
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
