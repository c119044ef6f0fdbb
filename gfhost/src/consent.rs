//! `gfhost client`'s answer to "fetch and run these plugins?": the list printed, then a remembered answer about
//! this server (by its certificate, in the mods folder's `consent.toml`), else a question on the terminal —
//! or, with `[mod-sync] consent = "yes"` (`--yes`), no question.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use gamefeature_host::config::ModConsent;
use gamefeature_host::net::consent::{ConsentHook, ModList, RememberedAnswers};

/// The hook for a client of the server known by `server` (its certificate's digest, or its address when it
/// has none), keeping answers in `answers`.
pub fn hook(policy: ModConsent, server: String, answers: PathBuf) -> ConsentHook {
    Arc::new(move |list: ModList| {
        let (server, answers) = (server.clone(), answers.clone());
        Box::pin(async move {
            print!("{list}");
            if policy == ModConsent::Yes {
                println!("fetching them: [mod-sync] consent = \"yes\"");
                return Ok(());
            }
            let remembered = RememberedAnswers::read(&answers).map_err(|e| e.to_string())?;
            match remembered.answer_for(&server, &list) {
                Some(true) => {
                    println!("fetching them: you agreed to them from this server before ({})", answers.display());
                    return Ok(());
                }
                Some(false) => {
                    return Err(format!(
                        "you refused these plugins from this server before; remove its entry from {} to be asked again",
                        answers.display()
                    ))
                }
                None => {}
            }
            let answer = tokio::task::spawn_blocking(ask).await.map_err(|e| e.to_string())?;
            let Some(agreed) = answer else {
                return Err("nobody answered whether to fetch and run them (ask on a terminal, or set [mod-sync] \
                            consent = \"yes\" to fetch without asking)"
                    .to_string());
            };
            RememberedAnswers::record(&answers, &server, &list, agreed).map_err(|e| e.to_string())?;
            match agreed {
                true => Ok(()),
                false => Err("the player refused to fetch and run them".to_string()),
            }
        })
    })
}

/// Asks on the terminal; `None` when standard input ends first.
fn ask() -> Option<bool> {
    let stdin = std::io::stdin();
    for _ in 0..3 {
        print!("Fetch and run them? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let read = stdin.lock().read_line(&mut line);
        // A terminal echoes the answer and its newline; an answer piped in is not echoed.
        if !stdin.is_terminal() {
            println!();
        }
        match read {
            Ok(0) | Err(_) => return None,
            Ok(_) => match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Some(true),
                "" | "n" | "no" => return Some(false),
                _ => println!("answer y or n"),
            },
        }
    }
    Some(false)
}
