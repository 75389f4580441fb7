//! Profiles kept in the vault (`tai profile add|set|use|remove`): a name and the model
//! settings it overrides. Removing one removes its server enablements in the same
//! transaction.

use rusqlite::params;

use super::{Error, Result, Store, check_name, now_ms, sql};

/// A profile row stored in the vault.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProfileRow {
    pub name: String,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_secret: Option<String>,
}

impl Store {
    pub fn profiles(&self) -> Result<Vec<ProfileRow>> {
        let mut st = self
            .conn
            .prepare("SELECT name, model, base_url, api_key_secret FROM profiles ORDER BY name")
            .map_err(sql("listing profiles"))?;
        let rows = st
            .query_map([], |r| {
                Ok(ProfileRow {
                    name: r.get(0)?,
                    model: r.get(1)?,
                    base_url: r.get(2)?,
                    api_key_secret: r.get(3)?,
                })
            })
            .map_err(sql("listing profiles"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(sql("listing profiles"))
    }

    pub fn profile_add(&self, p: &ProfileRow) -> Result<()> {
        check_name("profile", &p.name)?;
        let n = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO profiles(name, model, base_url, api_key_secret, created) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![p.name, p.model, p.base_url, p.api_key_secret, now_ms()],
            )
            .map_err(sql("adding a profile"))?;
        if n == 0 {
            return Err(Error::Invalid(format!(
                "profile {:?} already exists",
                p.name
            )));
        }
        Ok(())
    }

    /// Set one setting of a stored profile (`model`, `base_url`, `api_key_secret`); `None`
    /// clears it. The profile row is created when missing (`default` has none until set).
    pub fn profile_set(&self, name: &str, key: &str, value: Option<&str>) -> Result<()> {
        check_name("profile", name)?;
        let column = match key {
            "model" => "model",
            "base_url" => "base_url",
            "api_key_secret" => "api_key_secret",
            other => {
                return Err(Error::Invalid(format!(
                    "a profile has no setting {other:?} (model, base_url, api_key_secret)"
                )));
            }
        };
        self.conn
            .execute(
                "INSERT OR IGNORE INTO profiles(name, created) VALUES (?1, ?2)",
                params![name, now_ms()],
            )
            .map_err(sql("setting a profile"))?;
        self.conn
            .execute(
                &format!("UPDATE profiles SET {column} = ?1 WHERE name = ?2"),
                params![value, name],
            )
            .map_err(sql("setting a profile"))?;
        Ok(())
    }

    /// Remove a profile and its server enablements in one transaction.
    pub fn profile_remove(&mut self, name: &str) -> Result<()> {
        let tx = self.conn.transaction().map_err(sql("removing a profile"))?;
        let n = tx
            .execute("DELETE FROM profiles WHERE name = ?1", [name])
            .map_err(sql("removing a profile"))?;
        if n == 0 {
            return Err(Error::NotFound(format!(
                "no stored profile named {name:?} (see `tai profile list`)"
            )));
        }
        tx.execute("DELETE FROM mcp_server_profiles WHERE profile = ?1", [name])
            .map_err(sql("removing a profile"))?;
        tx.execute(
            "DELETE FROM meta WHERE key = 'current_profile' AND value = ?1",
            [name],
        )
        .map_err(sql("removing a profile"))?;
        tx.commit().map_err(sql("removing a profile"))
    }
}

#[cfg(test)]
mod tests {
    use super::ProfileRow;
    use crate::vault::{Error, Scratch};

    #[test]
    fn profiles_add_set_list_and_remove_with_their_enablements() {
        let mut s = Scratch::new();
        let lab = ProfileRow {
            name: "lab".into(),
            model: Some("m1".into()),
            ..ProfileRow::default()
        };
        s.store.profile_add(&lab).unwrap();
        assert!(matches!(s.store.profile_add(&lab), Err(Error::Invalid(_))));
        assert!(matches!(
            s.store.profile_add(&ProfileRow {
                name: "no good".into(),
                ..ProfileRow::default()
            }),
            Err(Error::Invalid(_))
        ));
        s.store
            .profile_set("lab", "base_url", Some("http://x"))
            .unwrap();
        s.store.profile_set("lab", "model", None).unwrap();
        // `default` gains a row when first set.
        s.store.profile_set("default", "model", Some("m2")).unwrap();
        assert!(matches!(
            s.store.profile_set("lab", "colour", Some("red")),
            Err(Error::Invalid(_))
        ));
        let rows = s.store.profiles().unwrap();
        assert_eq!(
            rows,
            [
                ProfileRow {
                    name: "default".into(),
                    model: Some("m2".into()),
                    ..ProfileRow::default()
                },
                ProfileRow {
                    name: "lab".into(),
                    base_url: Some("http://x".into()),
                    ..ProfileRow::default()
                },
            ]
        );
        // Removing drops its enablements and the current-profile choice, in one go.
        s.store
            .conn()
            .execute_batch(
                "INSERT INTO mcp_servers(name, transport, source, created, updated) VALUES ('srv', 'stdio', 'test', 0, 0);
                 INSERT INTO mcp_server_profiles(server, profile, enabled) VALUES ('srv', 'lab', 1), ('srv', 'default', 1);",
            )
            .unwrap();
        s.store.meta_set("current_profile", "lab").unwrap();
        s.store.profile_remove("lab").unwrap();
        let left: Vec<String> = s
            .store
            .conn()
            .prepare("SELECT profile FROM mcp_server_profiles")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(left, ["default"]);
        assert_eq!(s.store.meta_text("current_profile").unwrap(), None);
        assert!(matches!(
            s.store.profile_remove("lab"),
            Err(Error::NotFound(_))
        ));
    }
}
