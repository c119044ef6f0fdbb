//! A component that imports the host's log but exports something other than the game-feature lifecycle, as a
//! plugin built against the wrong world would. The host must refuse it with an error naming the missing export.

wit_bindgen::generate!({
    inline: "
        package test:missing-exports;

        interface greeter {
            greet: func(name: string) -> string;
        }

        world not-a-feature {
            export greeter;
        }
    ",
});

struct Component;

impl exports::test::missing_exports::greeter::Guest for Component {
    fn greet(name: String) -> String {
        format!("hello {name}")
    }
}

export!(Component);
