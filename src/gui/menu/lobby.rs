//! The launcher's Lobby screen (feature `broadcast`): the lobby's server
//! (kept in the settings) and your name; once in, the channels with how
//! many are in each, who is in yours with what they do, the challenges to
//! you, and the matches in progress. A [`LobbyVisit`] does the talking on
//! its own thread; Challenge and Accept leave the visit and start the
//! session that meets the other player (`lobby --challenge`/`--accept`),
//! which the window shows as Host and Join are shown.

use crate::engine::GameArgs;
use crate::gui::menu::script::Targets;
use crate::launcher::forms::{GameChoice, LobbyMeeting, Session};
use crate::live::lobby::{
    describe_channel, describe_match, describe_player, now_unix, LobbyView, LobbyVisit, VisitEvent,
};
use netcode::lobby::{check_name, Status};

/// What the Lobby screen asks of the launcher.
pub enum LobbyOutcome {
    /// Nothing.
    Stay,
    /// Back to the home screen.
    Back,
    /// Entered with this server and name: remember them.
    Entered {
        /// The `nats://` URL.
        server: String,
        /// The name.
        name: String,
    },
    /// Start this session (the visit has left, so its name is free).
    Start(Session),
}

/// The Lobby screen's state.
pub struct LobbyScreen {
    server: String,
    name: String,
    visit: Option<LobbyVisit>,
    view: Option<LobbyView>,
    /// The session to start once the visit has left.
    leaving_for: Option<Session>,
    problem: Option<String>,
}

impl LobbyScreen {
    /// The screen with the server and name last used.
    pub fn new(server: &str, name: &str) -> LobbyScreen {
        LobbyScreen {
            server: server.to_string(),
            name: name.to_string(),
            visit: None,
            view: None,
            leaving_for: None,
            problem: None,
        }
    }

    /// Whether a visit is under way (its news comes on another thread).
    pub fn busy(&self) -> bool {
        self.visit.is_some()
    }

    /// Leaves the lobby (the screen was left).
    pub fn close(&mut self) {
        self.visit = None;
        self.view = None;
        self.leaving_for = None;
    }

    /// Enters the lobby with the server and name typed, in `game`'s channel.
    fn enter(&mut self, game: Option<&GameChoice>) -> LobbyOutcome {
        let server = self.server.trim().to_string();
        let name = self.name.trim().to_string();
        let checked = match game {
            None => Err("choose a game first: a channel is one game's".to_string()),
            Some(_) if !server.starts_with("nats://") => Err(format!(
                "the lobby's server is a nats://HOST:PORT address (got {server:?})"
            )),
            Some(_) => check_name(&name),
        };
        let Some(game) = game.filter(|_| checked.is_ok()) else {
            self.problem = checked.err().map(|problem| format!("error: {problem}"));
            return LobbyOutcome::Stay;
        };
        let args = GameArgs {
            core: game.core.clone().into(),
            rom: game.rom.clone(),
            ..GameArgs::default()
        };
        self.problem = None;
        self.view = None;
        self.visit = Some(LobbyVisit::start(server.clone(), name.clone(), args));
        LobbyOutcome::Entered { server, name }
    }

    /// Enters again after a session that met nobody (its Cancel).
    pub fn resume(&mut self, game: Option<&GameChoice>) {
        if self.visit.is_none() {
            self.enter(game);
        }
    }

    /// Takes in what the visit said; the session to start once it left.
    fn update(&mut self) -> Option<Session> {
        let events = self.visit.as_ref().map(LobbyVisit::events)?;
        for event in events {
            match event {
                VisitEvent::Now(view) => self.view = Some(view),
                VisitEvent::Failed(problem) => {
                    self.visit = None;
                    self.view = None;
                    self.leaving_for = None;
                    self.problem = Some(format!("error: {problem}"));
                }
                VisitEvent::Left => {
                    self.visit = None;
                    self.view = None;
                    return self.leaving_for.take();
                }
            }
        }
        None
    }

    /// Lays the screen out.
    pub fn draw(
        &mut self,
        ui: &mut egui::Ui,
        targets: &mut Targets,
        game: Option<&GameChoice>,
    ) -> LobbyOutcome {
        if let Some(session) = self.update() {
            return LobbyOutcome::Start(session);
        }
        let mut outcome = LobbyOutcome::Stay;
        match (&self.visit, &self.view) {
            (None, _) => {
                targets.line(ui, "The lobby: players of your game meet there.");
                let mut entered = targets.text_field(ui, "Server", &mut self.server);
                entered |= targets.text_field(ui, "Name", &mut self.name);
                if targets.button(ui, "Enter the lobby").clicked() || entered {
                    outcome = self.enter(game);
                }
            }
            (Some(_), _) if self.leaving_for.is_some() => {
                targets.line(ui, "Leaving the lobby for the match…");
            }
            (Some(_), None) => {
                targets.line(ui, &format!("Entering the lobby at {}…", self.server));
            }
            (Some(_), Some(view)) => {
                if let Some(meeting) = self.in_the_lobby(ui, targets, view.clone()) {
                    if let Some(visit) = &self.visit {
                        visit.leave();
                    }
                    self.leaving_for = Some(Session::Lobby {
                        server: self.server.trim().to_string(),
                        meeting,
                    });
                }
            }
        }
        if targets.button(ui, "Back").clicked() {
            self.close();
            outcome = LobbyOutcome::Back;
        }
        if let Some(problem) = &self.problem {
            ui.colored_label(egui::Color32::LIGHT_RED, problem);
        }
        outcome
    }

    /// The lobby as the visit sees it; the meeting the player chose.
    fn in_the_lobby(
        &self,
        ui: &mut egui::Ui,
        targets: &mut Targets,
        view: LobbyView,
    ) -> Option<LobbyMeeting> {
        let me = self.name.trim();
        let mut chosen = None;
        targets.line(
            ui,
            &format!(
                "In the lobby as {me}, in the channel of {}",
                view.channel.describe()
            ),
        );
        for challenge in &view.challenges {
            ui.horizontal(|ui| {
                targets.line(ui, &format!("{} challenges you", challenge.from));
                if targets
                    .button(ui, &format!("Accept {}", challenge.from))
                    .clicked()
                {
                    chosen = Some(LobbyMeeting::Accept(challenge.from.clone()));
                }
                if targets
                    .button(ui, &format!("Decline {}", challenge.from))
                    .clicked()
                {
                    if let Some(visit) = &self.visit {
                        visit.decline(&challenge.from, &challenge.id, &format!("{me} declined"));
                    }
                }
            });
        }
        ui.separator();
        let ours = view.channel.key();
        egui::ScrollArea::vertical()
            .max_height(360.0)
            .show(ui, |ui| {
                for channel in &view.listing.channels {
                    targets.line(ui, &describe_channel(channel));
                    let here = channel.channel.key() == ours;
                    for player in &channel.players {
                        ui.horizontal(|ui| {
                            targets.line(ui, &describe_player(player));
                            let open = player.status == Status::Idle && player.name != me;
                            if here
                                && open
                                && targets
                                    .button(ui, &format!("Challenge {}", player.name))
                                    .clicked()
                            {
                                chosen = Some(LobbyMeeting::Challenge(player.name.clone()));
                            }
                        });
                    }
                }
                for host in view.listing.matches() {
                    if let Some(line) = describe_match(host, now_unix()) {
                        targets.line(ui, &line);
                    }
                }
            });
        chosen
    }
}
