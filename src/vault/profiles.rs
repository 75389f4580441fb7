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
