use super::*;

fn scope(team: &str, agent: &str, tenant: &str) -> Scope {
    let some = |v: &str| Some(v.to_owned());
    Scope {
        team_id: some(team),
        agent_id: some(agent),
        tenant_id: some(tenant),
    }
}

/// Strings that stress both directions: blanks, the BOM, separators, quotes, non-ASCII.
const AWKWARD: [&str; 9] = [
    "tm1",
    "  padded\t",
    "\u{FEFF}bom",
    "a b/c&d=e",
    "100%+",
    "é 東京",
    "",
    " \u{3000} ",
    "x?y#z",
];

#[test]
fn attach_written_bindings_read_back_the_same_from_environment_and_url() {
    for server in ServerKind::ALL {
        for team in AWKWARD {
            for agent in AWKWARD {
                let written = Binding::from_scope(server, &scope(team, agent, "acme"));
                let env: HashMap<&str, String> = written.env_pairs().into_iter().collect();
                let from_env = Binding::read(server, |f| env.get(f.env).cloned());
                assert_eq!(from_env, written, "{server} via env ({team:?}, {agent:?})");
                let from_url = Binding::from_query(server, &written.to_query());
                assert_eq!(from_url, written, "{server} via URL ({team:?}, {agent:?})");
            }
        }
    }
}

#[test]
fn blank_means_unset_with_the_references_trim() {
    assert_eq!(given(Some("  tm1 \n")), Some("tm1".into()));
    assert_eq!(given(Some("\u{FEFF} \u{00A0}")), None);
    assert_eq!(given(Some("")), None);
    assert_eq!(given(None), None);
    let memory = Binding::from_scope(ServerKind::Memory, &scope(" ", "\t", "\u{FEFF}"));
    assert!(memory.is_unbound());
    assert_eq!(memory.memory(), None);
}

#[test]
fn each_server_reads_only_its_own_fields() {
    let all = scope("tm1", "boo-1", "acme");
    let names = |server| -> Vec<&'static str> {
        Binding::from_scope(server, &all)
            .env_pairs()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    };
    assert_eq!(names(ServerKind::Tasks), ["CLAWBOO_SCOPE_TEAM_ID"]);
    assert_eq!(
        names(ServerKind::Memory),
        [
            "CLAWBOO_SCOPE_TEAM_ID",
            "CLAWBOO_SCOPE_AGENT_ID",
            "CLAWBOO_SCOPE_TENANT_ID"
        ]
    );
    assert_eq!(
        names(ServerKind::Tools),
        ["CLAWBOO_SCOPE_AGENT_ID", "CLAWBOO_SCOPE_TENANT_ID"]
    );
    assert_eq!(
        names(ServerKind::Teamchat),
        ["CLAWBOO_ROOM_TEAM_ID", "CLAWBOO_AUTHOR_AGENT_ID"]
    );
    assert_eq!(
        Binding::from_scope(ServerKind::Teamchat, &all).to_query(),
        "roomTeamId=tm1&postAuthorAgentId=boo-1"
    );
}

#[test]
fn teamchat_binds_only_with_both_room_and_author() {
    let team_only = Scope {
        team_id: Some("tm1".into()),
        agent_id: Some("  ".into()),
        tenant_id: None,
    };
    let binding = Binding::from_scope(ServerKind::Teamchat, &team_only);
    assert!(binding.is_unbound());
    assert_eq!(binding.teamchat(), None);
    let url = Binding::from_query(ServerKind::Teamchat, "roomTeamId=tm1");
    assert_eq!(url.teamchat(), None);
    let both = Binding::from_query(ServerKind::Teamchat, "postAuthorAgentId=a%201&roomTeamId=t");
    assert_eq!(
        both.teamchat(),
        Some(TeamchatBinding {
            team_id: "t".into(),
            agent_id: "a 1".into()
        })
    );
}

#[test]
fn typed_bindings_carry_the_values() {
    let b = Binding::from_query(
        ServerKind::Memory,
        "scopeTeamId=tm1&scopeTenantId=acme&scopeTeamId=other&unrelated=1",
    );
    assert_eq!(
        b.memory(),
        Some(MemoryBinding {
            team_id: Some("tm1".into()),
            agent_id: None,
            tenant_id: Some("acme".into()),
        }),
        "the first value of a repeated parameter counts"
    );
    assert_eq!(
        Binding::from_query(ServerKind::Tasks, "scopeTeamId=%E6%9D%B1").tasks(),
        Some(TasksBinding {
            team_id: "東".into()
        })
    );
    assert_eq!(Binding::from_query(ServerKind::Tasks, "").tasks(), None);
    let tools = Binding::from_query(ServerKind::Tools, "scopeAgentId=boo&scopeTeamId=ignored");
    assert_eq!(
        tools.tools(),
        ToolsBinding {
            agent_id: Some("boo".into()),
            tenant_id: None
        }
    );
}

#[test]
fn malformed_escapes_decode_as_typed() {
    let pairs = parse_query("a=%zz&b=%4&c=%41%42+x&=v&flag");
    assert_eq!(pairs["a"], "%zz");
    assert_eq!(pairs["b"], "%4");
    assert_eq!(pairs["c"], "AB x");
    assert_eq!(pairs["flag"], "");
}

#[test]
fn server_names_parse_and_unknown_ones_say_what_is_expected() {
    assert_eq!("memory".parse::<ServerKind>(), Ok(ServerKind::Memory));
    assert_eq!("clawbrain".parse::<ServerKind>(), Ok(ServerKind::ClawBrain));
    assert_eq!(
        "vscode".parse::<ServerKind>().unwrap_err().to_string(),
        "unknown server \"vscode\"; expected one of: tasks, memory, tools, teamchat, clawbrain"
    );
}
