//! `Data`: the serialized object that the `prepare_data` hook may edit.

use serde_json::{Map, Value};

/// The serialized object of one row, as the `prepare_data` hook sees it. It is built as a map
/// only when the hook reads or changes it; a resource whose hook leaves it alone writes its
/// rows straight to the response.
pub struct Data<'a> {
    map: Option<Map<String, Value>>,
    build: &'a dyn Fn() -> Map<String, Value>,
}

impl std::fmt::Debug for Data<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Data")
            .field("map", &self.map)
            .finish_non_exhaustive()
    }
}

impl<'a> Data<'a> {
    /// Data whose map `build` makes when first needed.
    pub(crate) fn new(build: &'a dyn Fn() -> Map<String, Value>) -> Data<'a> {
        Data { map: None, build }
    }

    /// The object as a map, to read or change at will.
    pub fn map(&mut self) -> &mut Map<String, Value> {
        let build = self.build;
        self.map.get_or_insert_with(build)
    }

    /// Sets a key; returns the value it had.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        self.map().insert(key.into(), value.into())
    }

    /// Removes a key; returns the value it had.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.map().shift_remove(key)
    }

    /// The value of a key.
    pub fn get(&mut self, key: &str) -> Option<&Value> {
        self.map().get(key)
    }

    /// The edited map, or `None` if the hook never looked at it.
    pub(crate) fn into_map(self) -> Option<Map<String, Value>> {
        self.map
    }
}
