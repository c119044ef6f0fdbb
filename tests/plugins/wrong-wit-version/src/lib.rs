//! A plugin built against `gamefeature:plugin@0.9.0` — as if from a newer SDK — whose manifest still claims
//! 0.1.0. The host must refuse the component itself, naming the version it was built against.

wit_bindgen::generate!({
    inline: "
        package gamefeature:plugin@0.9.0;

        interface log {
            log: func(message: string);
        }

        interface lifecycle {
            on-registering: func() -> result<_, string>;
        }

        world game-feature {
            import log;
            export lifecycle;
        }
    ",
});

struct Component;

impl exports::gamefeature::plugin::lifecycle::Guest for Component {
    fn on_registering() -> Result<(), String> {
        gamefeature::plugin::log::log("registering from the future");
        Ok(())
    }
}

export!(Component);
