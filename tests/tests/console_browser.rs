//! The operator console in a real browser (headless Chromium): every view opened on a `serve --all`
//! host, changes made by stdio bins on the same file appearing without a reload, hostile text shown
//! as text, memory seeded and deleted in the page as seen by a stdio `memory_search`. Each view
//! saves a screenshot under `target/` (`console-<view>.png`).

use std::time::Duration;

use clawboo_tests::browser::Browser;
use clawboo_tests::http::Host;
use clawboo_tests::{Server, TempDir, target_dir};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

/// A title, post or fact that would run script if it were ever treated as HTML.
const HOSTILE: &str =
    "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\"> hostile";

fn shot(browser: &mut Browser, view: &str) {
    let path = target_dir().join(format!("console-{view}.png"));
    browser.screenshot(&path);
    assert!(std::fs::metadata(&path).unwrap().len() > 1000, "{view}");
}

fn open(browser: &mut Browser, host: &Host, hash: &str, view: &str) {
    browser.eval(&format!("location.hash = {}", json!(hash)));
    let ready =
        format!("document.body.dataset.view === '{view}' && document.body.dataset.loaded === '1'");
    assert!(
        browser.wait_for(&ready, LIMIT),
        "the {view} view never loaded ({})",
        host.addr
    );
}

fn no_script_ran(browser: &mut Browser) {
    assert_eq!(browser.eval("typeof window.__pwned"), "undefined");
    assert_eq!(
        browser.eval("document.querySelectorAll('main script, main img').length"),
        0
    );
}

#[test]
fn every_view_updates_live_and_shows_hostile_text_as_text() {
    let dir = TempDir::new("console-browser");
    let host = Host::start(
        "clawboo-mcp-tasks",
        &["--all"],
        &dir.db_path(),
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    let mut browser = Browser::start();
    browser.navigate(&format!("http://{}/#/board", host.addr));
    assert!(browser.wait_for("document.body.dataset.loaded === '1'", LIMIT));
    assert!(browser.wait_for(
        "document.getElementById('live').dataset.state === 'live'",
        LIMIT
    ));

    // Board: a task created by a stdio process appears on the open board.
    let mut tasks = Server::spawn("clawboo-mcp-tasks", &dir.db_path(), &[]);
    let task = tasks.ok_json(
        "create_task",
        json!({"title": HOSTILE, "teamId": "t1", "priority": 3}),
    );
    let id = task["id"].as_str().unwrap().to_owned();
    let card = format!("document.querySelector('[data-testid=task-card][data-task-id=\"{id}\"]')");
    assert!(
        browser.wait_for(&format!("{card} !== null"), LIMIT),
        "the new task never appeared"
    );
    let text = browser.eval(&format!("{card}.textContent"));
    assert!(
        text.as_str()
            .unwrap()
            .contains("<script>window.__pwned=1</script>"),
        "{text}"
    );
    no_script_ran(&mut browser);
    shot(&mut browser, "board");

    // Team room: a stdio post appears in the open room; a person's post goes out as `user`.
    open(&mut browser, &host, "#/room/t1", "room");
    let mut chat = Server::spawn("clawboo-mcp-teamchat", &dir.db_path(), &[]);
    chat.ok_json(
        "team_chat_post",
        json!({"text": HOSTILE, "authorAgentId": "agent-1", "teamId": "t1"}),
    );
    let post = "document.querySelector('[data-testid=room-post][data-seq=\"1\"]')";
    assert!(
        browser.wait_for(&format!("{post} !== null"), LIMIT),
        "the post never appeared"
    );
    assert!(
        browser
            .eval(&format!("{post}.textContent"))
            .as_str()
            .unwrap()
            .contains("<img src=x")
    );
    browser.eval(
        "document.getElementById('room-input').value = 'hello from the console'; \
         document.getElementById('room-form').requestSubmit()",
    );
    let mine = "document.querySelector('[data-testid=room-post][data-seq=\"2\"]')";
    assert!(browser.wait_for(
        &format!("{mine} !== null && {mine}.dataset.kind === 'user'"),
        LIMIT
    ));
    let read = chat.ok_json(
        "team_chat_subscribe",
        json!({"sinceSeq": 1, "authorAgentId": "agent-2", "teamId": "t1"}),
    );
    assert!(
        read.to_string().contains("hello from the console"),
        "{read}"
    );
    no_script_ran(&mut browser);
    shot(&mut browser, "room");

    // Memory: a fact seeded in the page is found by a stdio memory_search; deleted, it is gone.
    open(&mut browser, &host, "#/memory", "memory");
    browser.eval(&format!(
        "document.getElementById('memory-seed-open').click(); \
         document.getElementById('seed-title').value = 'Zebra runbook'; \
         document.getElementById('seed-content').value = {}; \
         document.getElementById('seed-tags').value = 'ops, zebra'; \
         document.getElementById('seed-form').requestSubmit()",
        json!(format!(
            "{HOSTILE} zebras graze at noon; key sk-browserfakefake0123456789"
        ))
    ));
    let mut memory = Server::spawn(
        "clawboo-mcp-memory",
        &dir.db_path(),
        &[("CLAWBOO_EMBEDDINGS", "off")],
    );
    let hits = clawboo_tests::http::poll_until(LIMIT, || {
        let found = memory.ok_json("memory_search", json!({"query": "zebras", "mode": "fts"}));
        found.as_array().filter(|a| !a.is_empty()).cloned()
    })
    .expect("the seeded fact is found by memory_search");
    let fact_id = hits[0]["id"].as_str().unwrap().to_owned();
    assert!(
        !hits[0].to_string().contains("browserfakefake"),
        "stored redacted: {}",
        hits[0]
    );
    let row = format!("document.querySelector('[data-testid=memory-row][data-id=\"{fact_id}\"]')");
    assert!(browser.wait_for(&format!("{row} !== null"), LIMIT));
    assert!(
        browser
            .eval(&format!("{row}.textContent"))
            .as_str()
            .unwrap()
            .contains("<script>")
    );
    no_script_ran(&mut browser);
    shot(&mut browser, "memory");
    browser.eval(&format!(
        "{row}.querySelector('[data-testid=memory-delete]').click()"
    ));
    assert!(browser.wait_for("document.getElementById('confirm-dialog').open", LIMIT));
    browser.eval("document.getElementById('confirm-ok').click()");
    assert!(
        browser.wait_for(&format!("{row} === null"), LIMIT),
        "the deleted row stayed"
    );
    let after = memory.ok_json("memory_search", json!({"query": "zebras", "mode": "fts"}));
    assert_eq!(
        after,
        Value::Array(vec![]),
        "deleted in the page, gone from memory_search"
    );

    // Approvals and audit: the operator actions above are listed with who made them.
    open(&mut browser, &host, "#/approvals", "approvals");
    assert!(browser.wait_for(
        "document.querySelectorAll('[data-testid=action-row]').length >= 3",
        LIMIT
    ));
    let who = browser.eval("document.getElementById('actions-rows').textContent");
    assert!(who.as_str().unwrap().contains("local operator"), "{who}");
    shot(&mut browser, "approvals");

    // Health.
    open(&mut browser, &host, "#/health", "health");
    assert!(browser.wait_for(
        "document.querySelectorAll('#health-rows tr').length >= 5",
        LIMIT
    ));
    shot(&mut browser, "health");
}
