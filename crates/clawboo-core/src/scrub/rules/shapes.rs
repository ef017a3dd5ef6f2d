//! The shape rules with no literal prefix, or with a context: prefix-less shapes with a
//! distinctive inner mark (Telegram bot tokens, Azure AD client secrets, Azure storage keys),
//! structured tokens told by their structure (a JWS/JWE whose header decodes to JSON with `alg`,
//! dotted base64url tokens with random ends, the private members of a JWK, base64 of JSON that
//! holds credentials), URL user-info and scheme-less DSNs (Oracle, Go's MySQL driver, Samba's
//! `user%pass`), CLI flags and statements that carry a password (`curl -u`, `sshpass -p`,
//! `mysql -p…`, `IDENTIFIED BY`, `ConvertTo-SecureString`, `chpasswd`), basic-auth pairs in code
//! (`auth=("user", "…")`), `.netrc`, `.pgpass` and Postfix `sasl_passwd` lines, `{SSHA}`-style
//! hashes, base64-wrapped PEM keys, seed phrases; each with the check that has the last word on a
//! match.
//!
//! Guarantees: a check is a pure function of the match, linear in its length (a decode reads at
//! most a few KB). Must never: hold a real credential; use an unbounded look-back.

use super::{real, token_is_real};
use crate::scrub::is_secret_key;
use crate::scrub::value::{decode_base64, is_placeholder, looks_random};

/// A rule with no literal prefix or with a context.
pub(super) struct RuleSpec {
    /// What it finds (documentation; the tests' corpus uses the same names).
    #[allow(dead_code)]
    pub(super) kind: &'static str,
    /// The regex (`\b` is an ASCII word boundary).
    pub(super) pattern: &'static str,
    /// Which capture group is the secret (0 = the whole match).
    pub(super) group: usize,
    /// Literals one of which the text must contain before the regex is worth running (none:
    /// always run, for a pattern that starts with literals of its own, which the regex searches
    /// as fast). A rule whose pattern starts with a case-insensitive word lists its usual
    /// spellings here: a `contains` beats a search for every mix of cases.
    pub(super) needs: &'static [&'static str],
    /// The last word on a match: `false` leaves it alone.
    pub(super) check: fn(&str) -> bool,
}

/// Rules with no literal prefix or with a context.
pub(super) const OTHER: &[RuleSpec] = &[
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
    // HTTP basic auth in code: `auth=("user", "password")`, `HTTPBasicAuth('user', '…')`.
    RuleSpec {
        kind: "basic-auth-pair",
        pattern: r#"(?:\bauth[ \t]*=[ \t]*\(|\b(?:HTTPBasicAuth|HTTPDigestAuth|BasicAuth|auth)\()[ \t]*(?:'[^'\n]*'|"[^"\n]*")[ \t]*,[ \t]*('[^'\n]*'|"[^"\n]*")"#,
        group: 1,
        needs: &["auth=", "auth =", "auth(", "Auth("],
        check: value_not_placeholder,
    },
    // `echo 'user:password' | chpasswd`.
    RuleSpec {
        kind: "chpasswd",
        pattern: r#"\b(?:echo|printf)[ \t]+['"]?[A-Za-z0-9._-]+:([^\s'"]+)['"]?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b"#,
        group: 1,
        needs: &["chpasswd"],
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
}
